// The package's public surface.

// `await using` needs Symbol.asyncDispose at run time (Node 18.18+ and 20 have it; older
// runtimes get the registered symbol TypeScript's helpers also look for).
(Symbol as { asyncDispose?: symbol }).asyncDispose ??= Symbol.for('Symbol.asyncDispose');

export { Gateway, type GatewayOptions, type ClaimOptions, type AdoptOptions } from './gateway.js';
export { Task, type Grant } from './task.js';
export { MutationResult, type MutationRequest, type Body } from './mutation.js';
export { OutcomeUnknownError, type WaitOptions } from './outcome_unknown.js';
export type { Receipt, OperationState } from './receipt.js';
export { InvalidArgumentError } from './labels.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry_rules.js';
export * from './errors.js';
