// Lease arithmetic, pure: every time is a reading of one monotonic clock (performance.now() in
// task.ts) in milliseconds. The lease is counted from when the claim or renewal was SENT: the
// gateway set the expiry at some moment after that, so sent + lease_ms can only be early, never
// late. The safety margin covers clock-rate differences and the way from this check to the
// gateway's admission.

import { InvalidArgumentError } from './labels.js';

/** Renewal happens at a third of the lease, give or take this fraction of that third. */
const RENEW_JITTER = 0.1;

/** The default margin: a tenth of the lease, at least 100 ms and at most 5 s. */
export function defaultSafetyMarginMs(leaseMs: number): number {
  return Math.min(5_000, Math.max(100, Math.round(leaseMs / 10)));
}

/** The margin must leave time for the renewals at a third of the lease. */
export function checkLeaseTiming(leaseMs: number, safetyMarginMs: number): void {
  if (!Number.isSafeInteger(safetyMarginMs) || safetyMarginMs < 0 || safetyMarginMs >= leaseMs / 2) {
    throw new InvalidArgumentError(
      `safetyMarginMs must be an integer from 0 to below half the lease (${leaseMs} ms), not ${safetyMarginMs}`,
    );
  }
}

/** The last instant at which the lease can still be trusted, for a claim or renewal sent at `sentAtMs`. */
export function leaseDeadline(sentAtMs: number, leaseMs: number, safetyMarginMs: number): number {
  return sentAtMs + leaseMs - safetyMarginMs;
}

/** A renewal only ever extends the lease (the gateway keeps max(old end, now + lease_ms)). */
export function extendedDeadline(currentDeadline: number, renewalSentAtMs: number, leaseMs: number, safetyMarginMs: number): number {
  return Math.max(currentDeadline, leaseDeadline(renewalSentAtMs, leaseMs, safetyMarginMs));
}

/** True while the lease's expiry can still be ruled out at `nowMs`. */
export function leaseTrusted(nowMs: number, deadlineMs: number): boolean {
  return nowMs < deadlineMs;
}

/** Delay from a claim or renewal's send time to the next renewal: a third of the lease, jittered. */
export function renewalDelayMs(leaseMs: number, random: number): number {
  const third = leaseMs / 3;
  const r = Number.isFinite(random) ? Math.min(1, Math.max(0, random)) : 0.5;
  return Math.max(1, Math.round(third * (1 - RENEW_JITTER + 2 * RENEW_JITTER * r)));
}

/**
 * After a transient renewal failure: try again soon, but with half the time left at most, so
 * several tries fit before the deadline; null when no time is left (the lease is lost).
 */
export function renewalRetryDelayMs(nowMs: number, deadlineMs: number, failures: number, random: number): number | null {
  const left = deadlineMs - nowMs;
  if (left <= 0) return null;
  const ceiling = Math.min(2_000, 100 * 2 ** Math.max(0, failures - 1), left / 2);
  const r = Number.isFinite(random) ? Math.min(1, Math.max(0, random)) : 0.5;
  return Math.max(1, Math.round(ceiling / 2 + (ceiling / 2) * r));
}
