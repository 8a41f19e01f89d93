// A small check of a call's arguments against the tool's JSON Schema (an object schema with
// typed properties, required, enum; additionalProperties false refuses others), so a bad call is
// refused with a clear message before any task is claimed. Pure.

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; enum?: unknown[]; additionalProperties?: boolean; items?: Schema };

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function fits(value: unknown, schema: Schema, at: string, problems: string[]): void {
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual = typeOf(value);
    if (!types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
      problems.push(`${at} must be ${types.join(' or ')}, not ${actual}`);
      return;
    }
  }
  if (schema.enum !== undefined && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    problems.push(`${at} must be one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeOf(value) === 'object') {
    const obj = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in obj)) problems.push(`${at}.${name} is required`);
    for (const [name, v] of Object.entries(obj)) {
      const sub = schema.properties?.[name];
      if (sub !== undefined) fits(v, sub, `${at}.${name}`, problems);
      else if (schema.additionalProperties === false) problems.push(`${at}.${name} is not an argument of this tool`);
    }
  }
  if (typeOf(value) === 'array' && schema.items !== undefined) {
    (value as unknown[]).forEach((v, i) => fits(v, schema.items!, `${at}[${i}]`, problems));
  }
}

/** What is wrong with `args` under `schema` (empty when nothing is). */
export function argumentProblems(args: unknown, schema: object): string[] {
  const problems: string[] = [];
  fits(args, schema as Schema, 'arguments', problems);
  return problems;
}
