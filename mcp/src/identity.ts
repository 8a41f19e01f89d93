// The operation identity of a tool call (docs/mcp.md, "Operation identity"): the same intent
// always maps to the same Idempotency-Key, whatever session, connection or retry it comes from,
// so the gateway's ledger executes it once. Pure.

import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('arguments must not contain NaN or Infinity');
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * "mcp-" + 40 hex digits of SHA-256 over the tool's name and its canonical arguments (the
 * optional intent_id included, so two deliberate identical actions can be told apart). The task
 * (tenant, task) is the key's scope at the gateway, so it is not hashed in again.
 */
export function operationId(tool: string, args: Record<string, unknown>): string {
  const digest = createHash('sha256').update(canonicalJson({ tool, arguments: args })).digest('hex');
  return `mcp-${digest.slice(0, 40)}`;
}
