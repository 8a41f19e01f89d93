// The operation receipt (GET .../operations/{id}), read into a typed object, and which of its
// states are final.

export type OperationState = 'in_flight' | 'unknown' | 'succeeded' | 'rejected' | 'not_executed';

export interface Receipt {
  id: string;
  state: OperationState;
  attempts: number;
  method: string;
  provider: string;
  target: string;
  expectedVersion: number;
  committedVersion: number | null;
  /** The provider reply that settled the operation (status and digest, never the body), if one did. */
  response: { status: number; sha256: string; length: number } | null;
  /** How evidence settled it, when no provider reply did: a lookup, a webhook or an operator. */
  resolution: { source: string; resolvedMs: number; evidence: unknown } | null;
}

const STATES = new Set<string>(['in_flight', 'unknown', 'succeeded', 'rejected', 'not_executed']);

/** Final states: nothing will change the operation any more. */
export function isSettled(state: OperationState): boolean {
  return state === 'succeeded' || state === 'rejected' || state === 'not_executed';
}

/** The receipt in a 200 `ok` body, or null when the body does not have its shape. */
export function parseReceipt(body: Record<string, unknown> | null): Receipt | null {
  const op = body?.['operation'];
  if (typeof op !== 'object' || op === null) return null;
  const o = op as Record<string, unknown>;
  if (typeof o['id'] !== 'string' || typeof o['state'] !== 'string' || !STATES.has(o['state'])) return null;
  const response = o['response'] as Record<string, unknown> | null | undefined;
  const resolution = o['resolution'] as Record<string, unknown> | null | undefined;
  return {
    id: o['id'],
    state: o['state'] as OperationState,
    attempts: Number(o['attempts']),
    method: String(o['method']),
    provider: String(o['provider']),
    target: String(o['target']),
    expectedVersion: Number(o['expected_version']),
    committedVersion: typeof o['committed_version'] === 'number' ? o['committed_version'] : null,
    response:
      response && typeof response === 'object'
        ? { status: Number(response['status']), sha256: String(response['sha256']), length: Number(response['length']) }
        : null,
    resolution:
      resolution && typeof resolution === 'object'
        ? { source: String(resolution['source']), resolvedMs: Number(resolution['resolved_ms']), evidence: resolution['evidence'] }
        : null,
  };
}
