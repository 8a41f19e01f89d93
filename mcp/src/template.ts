// Path and body templates of a configured tool, filled from the call's arguments. Pure.
//   path: "/bookings/{id}"  {name} is replaced by the argument, percent-encoded as one segment.
//   body: any JSON; a string that is exactly "{{name}}" becomes the argument's value (any JSON
//         type); "{{name}}" inside a longer string is replaced by its text. A missing optional
//         argument drops an object member whose whole value is its placeholder.

const WHOLE = /^\{\{([A-Za-z0-9_]+)\}\}$/;
const INNER = /\{\{([A-Za-z0-9_]+)\}\}/g;

export function fillPath(template: string, args: Record<string, unknown>): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    const value = args[name];
    if (value === undefined || value === null || typeof value === 'object') {
      throw new Error(`path argument ${name} must be a string, number or boolean`);
    }
    return encodeURIComponent(String(value));
  });
}

const MISSING = Symbol('missing');

function fill(template: unknown, args: Record<string, unknown>): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE.exec(template);
    if (whole) return whole[1]! in args ? args[whole[1]!] : MISSING;
    return template.replace(INNER, (_, name: string) => {
      const value = args[name];
      return value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
    });
  }
  if (Array.isArray(template)) return template.map((t) => fill(t, args)).filter((v) => v !== MISSING);
  if (template !== null && typeof template === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, t] of Object.entries(template)) {
      const v = fill(t, args);
      if (v !== MISSING) out[k] = v;
    }
    return out;
  }
  return template;
}

export function fillBody(template: unknown, args: Record<string, unknown>): unknown {
  const body = fill(template, args);
  return body === MISSING ? undefined : body;
}
