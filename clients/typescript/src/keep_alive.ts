// A lease kept alive by timers: renewal at a third of the lease (jittered), transient failures
// tried again while the lease can still be trusted, and the lease-lost signal fired the moment a
// renewal is refused or the deadline (lease_clock.ts) passes. Protected calls ask `check()`,
// which reads the clock itself rather than trusting a timer to have fired: after a pause
// (SIGSTOP, a frozen VM) timers run late, the clock does not.

import { LeaseLostError, type GatewayError } from './errors.js';
import {
  extendedDeadline,
  leaseDeadline,
  leaseTrusted,
  renewalDelayMs,
  renewalRetryDelayMs,
} from './lease_clock.js';
import { decideRenewal, type Attempt } from './retry_rules.js';

export interface RenewalOutcome {
  attempt: Attempt;
  /** The error to report if this renewal means the lease is lost. */
  error: GatewayError | null;
}

export interface KeepAliveOptions {
  leaseMs: number;
  safetyMarginMs: number;
  /** performance.now() when the claim was sent. */
  claimSentAt: number;
  /** Sends one renewal with at most `timeoutMs`. */
  renew: (timeoutMs: number) => Promise<RenewalOutcome>;
}

const now = () => performance.now();

export class KeepAlive implements LeaseGuard {
  readonly #controller = new AbortController();
  readonly #opts: KeepAliveOptions;
  #deadline: number;
  #renewTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #stopped = false;

  constructor(opts: KeepAliveOptions) {
    this.#opts = opts;
    this.#deadline = leaseDeadline(opts.claimSentAt, opts.leaseMs, opts.safetyMarginMs);
    this.#armDeadline();
    this.#scheduleRenewal(opts.claimSentAt);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Milliseconds until the lease can no longer be trusted (0 once lost). */
  remainingMs(): number {
    return this.#controller.signal.aborted ? 0 : Math.max(0, this.#deadline - now());
  }

  /** Throws LeaseLostError (and fires the signal) unless the lease can still be trusted now. */
  check(): void {
    if (!this.#controller.signal.aborted && !leaseTrusted(now(), this.#deadline)) {
      this.lose(new LeaseLostError('the lease may have expired (its deadline, counted from the last renewal sent, has passed); nothing was sent'));
    }
    if (this.#controller.signal.aborted) throw this.#controller.signal.reason;
  }

  /** Fires the lease-lost signal with this reason and stops renewing. */
  lose(reason: LeaseLostError): void {
    this.#stopTimers();
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  /** Stops renewing (at release); the signal fires with `reason` so waiters stop too. */
  stop(reason: LeaseLostError): void {
    this.#stopped = true;
    this.lose(reason);
  }

  /** Fires the signal if the deadline has passed; true when the lease is (now) lost. */
  #expireIfDue(): boolean {
    try {
      this.check();
      return false;
    } catch {
      return true;
    }
  }

  #stopTimers(): void {
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#deadlineTimer);
  }

  #armDeadline(): void {
    clearTimeout(this.#deadlineTimer);
    // unref: a forgotten task handle must not keep a finished program running.
    this.#deadlineTimer = setTimeout(() => {
      // Timers may run early by a rounding; re-arm if the deadline has not come (or moved).
      if (!this.#expireIfDue()) this.#armDeadline();
    }, Math.max(1, this.#deadline - now()));
    this.#deadlineTimer.unref();
  }

  #scheduleRenewal(lastSentAt: number): void {
    const at = lastSentAt + renewalDelayMs(this.#opts.leaseMs, Math.random());
    this.#setRenewTimer(at - now());
  }

  #setRenewTimer(delayMs: number): void {
    clearTimeout(this.#renewTimer);
    this.#renewTimer = setTimeout(() => void this.#renewOnce(), Math.max(1, delayMs));
    this.#renewTimer.unref();
  }

  async #renewOnce(): Promise<void> {
    if (this.#stopped || this.#controller.signal.aborted) return;
    // Past the deadline a renewal cannot help: the gateway never revives an expired grant.
    if (this.#expireIfDue()) return;
    const sentAt = now();
    const outcome = await this.#opts.renew(Math.max(100, this.#deadline - sentAt));
    if (this.#stopped || this.#controller.signal.aborted) return;
    switch (decideRenewal(outcome.attempt)) {
      case 'renewed':
        this.#failures = 0;
        this.#deadline = extendedDeadline(this.#deadline, sentAt, this.#opts.leaseMs, this.#opts.safetyMarginMs);
        this.#armDeadline();
        this.#scheduleRenewal(sentAt);
        return;
      case 'try_again': {
        this.#failures += 1;
        const delay = renewalRetryDelayMs(now(), this.#deadline, this.#failures, Math.random());
        if (delay === null) this.#expireIfDue();
        else this.#setRenewTimer(delay);
        return;
      }
      case 'lost':
        this.lose(
          new LeaseLostError(`the renewal was refused (${outcome.error?.code ?? 'unknown'}); the lease is lost`, {
            cause: outcome.error ?? undefined,
            status: outcome.error?.status ?? null,
            problem: outcome.error?.problem ?? null,
            requestId: outcome.error?.requestId ?? null,
          }),
        );
        return;
    }
  }
}

/** What a task handle needs of its lease, kept alive here or by whoever passed the grant in. */
export interface LeaseGuard {
  readonly signal: AbortSignal;
  check(): void;
  lose(reason: LeaseLostError): void;
  stop(reason: LeaseLostError): void;
  remainingMs(): number;
}

/**
 * A grant someone else holds and renews (an MCP host that passes its grant): no timers and no
 * local deadline, since its send times are not known here. The gateway's fence still refuses it
 * once it expires, and the first refusal fires the signal.
 */
export class BorrowedLease implements LeaseGuard {
  readonly #controller = new AbortController();
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
  check(): void {
    if (this.#controller.signal.aborted) throw this.#controller.signal.reason;
  }
  lose(reason: LeaseLostError): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }
  stop(reason: LeaseLostError): void {
    this.lose(reason);
  }
  remainingMs(): number {
    return this.#controller.signal.aborted ? 0 : Number.POSITIVE_INFINITY;
  }
}
