// What a failed fetch() says about whether the request left this process. fetch does not report
// the bytes it wrote, so only failures that happen before a connection exists count as "not
// sent"; every other failure (a reset, a timeout, an abort) may have come after the request
// reached the gateway, and is treated as sent.

/** Error codes (Node's and undici's) raised while opening a connection, before any request byte. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function codesOf(error: unknown, depth = 0): string[] {
  if (depth > 4 || typeof error !== 'object' || error === null) return [];
  const found: string[] = [];
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') found.push(code);
  found.push(...codesOf((error as { cause?: unknown }).cause, depth + 1));
  const inner = (error as { errors?: unknown }).errors;
  if (Array.isArray(inner)) for (const e of inner) found.push(...codesOf(e, depth + 1));
  return found;
}

/** True when fetch failed before any byte of the request could have been sent. */
export function failedBeforeSending(error: unknown): boolean {
  const codes = codesOf(error);
  return codes.length > 0 && codes.every((c) => CONNECT_CODES.has(c));
}

/** A short description of a fetch failure for error messages. */
export function describeFetchFailure(error: unknown): string {
  const codes = codesOf(error);
  const name = error instanceof Error ? error.name : 'error';
  return codes.length > 0 ? `${name} (${[...new Set(codes)].join(', ')})` : name;
}
