// The error for a mutation whose outcome the client does not know: the gateway said
// unknown_outcome, or the request was sent and its reply was lost (timeout, reset). It is never
// resent; `wait()` keeps reading the operation's receipt until evidence settles it.

import { GatewayError, type ErrorDetails } from './errors.js';
import type { MutationResult } from './mutation.js';
import type { Receipt } from './receipt.js';

export type OutcomeUnknownReason = 'unknown_outcome' | 'reply_lost' | 'lease_ended_while_forwarded';

export interface WaitOptions {
  /** How long to keep reading the receipt (default 5 minutes). */
  timeoutMs?: number;
}

export class OutcomeUnknownError extends GatewayError {
  /** The operation (Idempotency-Key). */
  readonly operationId: string;
  /**
   * 'unknown_outcome' when the gateway said so; 'reply_lost' when no reply came;
   * 'lease_ended_while_forwarded' when the grant stopped being current while the request was
   * forwarded: it went out and its outcome is recorded, to be read with a new claim's receipt().
   */
  readonly reason: OutcomeUnknownReason;
  /** The last receipt read, if any (null: none read, or the gateway has no record yet). */
  readonly receipt: Receipt | null;
  readonly #wait: (options?: WaitOptions) => Promise<MutationResult>;

  constructor(
    message: string,
    details: ErrorDetails & {
      operationId: string;
      reason: OutcomeUnknownReason;
      receipt: Receipt | null;
      wait: (options?: WaitOptions) => Promise<MutationResult>;
    },
  ) {
    super('unknown_outcome', message, details);
    this.operationId = details.operationId;
    this.reason = details.reason;
    this.receipt = details.receipt;
    this.#wait = details.wait;
  }

  /**
   * Waits until the operation is settled, then answers as mutate() would have: a MutationResult
   * when it succeeded, RejectedByProviderError when the provider refused it,
   * ProviderUnavailableError when it was not executed (an exact retry may send it again), or
   * this error again when the wait ran out.
   */
  wait(options?: WaitOptions): Promise<MutationResult> {
    return this.#wait(options);
  }
}
