// The retry table of docs/api.md as pure functions of what an attempt came to: no timers, no I/O,
// so every row is a unit test. The I/O side (task.ts) asks these and sleeps as told.

/** What one attempt at a request came to, as far as the client can know. */
export type Attempt =
  /** Failed while connecting: no byte of the request left this process. */
  | { kind: 'not_sent' }
  /** The request was (or may have been) sent, and no complete reply came: timeout, reset. */
  | { kind: 'reply_lost' }
  /** A reply with its Gateway-Status code (null when it had none) and Retry-After in ms. */
  | { kind: 'reply'; code: string | null; retryAfterMs: number | null };

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff before retry n is drawn from [d/2, d] with d = min(maxDelayMs, baseDelayMs * 2^(n-1)). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error goes to the caller. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 6,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 60_000,
});

export type Decision =
  | { action: 'done' }
  | { action: 'retry'; delayMs: number }
  /** Never resend: the request may have reached the provider. Read the receipt. */
  | { action: 'wait_for_receipt' }
  | { action: 'fail' };

/** Codes whose exact retry (same key, payload and Expected-Version) docs/api.md allows. */
const RETRY_SAME_KEY = new Set(['authority_unavailable', 'operation_in_flight', 'provider_unavailable']);

/** Backoff with jitter before retry number `retry` (1 for the first retry). */
export function backoffMs(retry: number, policy: RetryPolicy, random: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * clamp01(random));
}

/** The pause before the next try: the server's Retry-After when it gave one, else backoff. */
function pause(attempt: Attempt, attemptsMade: number, policy: RetryPolicy, random: number): Decision {
  if (attemptsMade >= policy.maxAttempts) return { action: 'fail' };
  const retryAfter = attempt.kind === 'reply' ? attempt.retryAfterMs : null;
  if (retryAfter !== null) {
    if (retryAfter > policy.maxRetryAfterMs) return { action: 'fail' };
    // A little jitter on top, so agents told the same Retry-After do not return in one burst.
    return { action: 'retry', delayMs: retryAfter + Math.round(policy.baseDelayMs * clamp01(random)) };
  }
  return { action: 'retry', delayMs: backoffMs(attemptsMade, policy, random) };
}

/** A protected mutation (proxy request). `attemptsMade` counts the attempt just made. */
export function decideMutation(attempt: Attempt, attemptsMade: number, policy: RetryPolicy, random: number): Decision {
  switch (attempt.kind) {
    case 'not_sent':
      return pause(attempt, attemptsMade, policy, random);
    case 'reply_lost':
      return { action: 'wait_for_receipt' };
    case 'reply':
      if (attempt.code === 'committed' || attempt.code === 'historical_retry') return { action: 'done' };
      // resolved_without_reply: settled by evidence, with no reply to replay; the receipt says how.
      if (attempt.code === 'unknown_outcome' || attempt.code === 'resolved_without_reply') return { action: 'wait_for_receipt' };
      if (attempt.code !== null && RETRY_SAME_KEY.has(attempt.code)) {
        const next = pause(attempt, attemptsMade, policy, random);
        // Still being forwarded after every retry: its outcome is pending, so wait for it.
        if (next.action === 'fail' && attempt.code === 'operation_in_flight') return { action: 'wait_for_receipt' };
        return next;
      }
      return { action: 'fail' };
  }
}

/**
 * A claim. Only what provably issued no grant is retried: a connect failure and
 * authority_unavailable (whose commit may still have happened: then the retry meets `busy`).
 * A lost reply is not retried: a grant may exist that nobody holds, and a retry would only be busy.
 */
export function decideClaim(attempt: Attempt, attemptsMade: number, policy: RetryPolicy, random: number): Decision {
  if (attempt.kind === 'reply' && attempt.code === 'granted') return { action: 'done' };
  if (attempt.kind === 'not_sent' || (attempt.kind === 'reply' && attempt.code === 'authority_unavailable')) {
    return pause(attempt, attemptsMade, policy, random);
  }
  return { action: 'fail' };
}

export type RenewalDecision = 'renewed' | 'try_again' | 'lost';

/**
 * A keep-alive renewal. Renewing is safe to repeat (it never shortens a lease), so anything
 * transient is tried again while the lease can still be trusted; any refusal means the grant
 * cannot be kept, so the lease is treated as lost at once.
 */
export function decideRenewal(attempt: Attempt): RenewalDecision {
  if (attempt.kind !== 'reply') return 'try_again';
  if (attempt.code === 'renewed') return 'renewed';
  if (attempt.code === 'authority_unavailable' || attempt.code === 'internal_error' || attempt.code === null) return 'try_again';
  return 'lost';
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowEpochMs: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowEpochMs);
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0.5;
}
