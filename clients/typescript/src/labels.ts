// Labels (tenant, task, owner, provider, operation id) as docs/api.md defines them, checked here
// so a bad one is a clear local error rather than a request the gateway refuses.

/** Thrown for bad arguments, before anything is sent. */
export class InvalidArgumentError extends Error {
  override name = 'InvalidArgumentError';
}

const LABEL_MAX = 80;

/** True for 1 to 80 printable ASCII characters (codes 33 to 126). */
export function isLabel(value: unknown): value is string {
  if (typeof value !== 'string' || value.length < 1 || value.length > LABEL_MAX) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 33 || c > 126) return false;
  }
  return true;
}

export function requireLabel(what: string, value: unknown): string {
  if (!isLabel(value)) {
    throw new InvalidArgumentError(
      `${what} must be 1 to 80 printable ASCII characters without spaces, not ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * A label as one percent-encoded path segment. "." and ".." cannot be sent as path segments:
 * WHATWG URL parsing (which fetch applies) turns them, even spelt %2e, into a step up the path.
 */
export function pathSegment(what: string, value: unknown): string {
  const label = requireLabel(what, value);
  if (label === '.' || label === '..') {
    throw new InvalidArgumentError(`${what} "${label}" cannot be used in a URL path (fetch would resolve it as a dot-segment)`);
  }
  return encodeURIComponent(label);
}

/** A provider path: starts with "/", visible ASCII only; the gateway refuses dot-segments and the like. */
export function requireProviderPath(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/')) {
    throw new InvalidArgumentError(`path must be a string starting with "/", not ${JSON.stringify(value)}`);
  }
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 33 || c > 126) {
      throw new InvalidArgumentError(`path must be visible ASCII (percent-encode other bytes): ${JSON.stringify(value)}`);
    }
  }
  if (value.includes('#')) throw new InvalidArgumentError(`path must not contain "#": ${JSON.stringify(value)}`);
  return value;
}

export function requirePositiveInt(what: string, value: unknown, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new InvalidArgumentError(`${what} must be an integer from 1 to ${max}, not ${JSON.stringify(value)}`);
  }
  return value;
}
