// A task handle: the grant of one (tenant, task), its lease kept alive, and the protected calls
// made with it. Mutations on one handle run one at a time, so the tracked Expected-Version is
// always the one the gateway will check.

import {
  GatewayError,
  GatewayUnreachableError,
  LeaseLostError,
  ProviderUnavailableError,
  RejectedByProviderError,
  UnexpectedReplyError,
  endsLease,
  errorForCode,
} from './errors.js';
import type { LeaseGuard } from './keep_alive.js';
import { InvalidArgumentError, pathSegment } from './labels.js';
import { MutationResult, prepareMutation, type MutationRequest } from './mutation.js';
import { OutcomeUnknownError, type WaitOptions } from './outcome_unknown.js';
import { isSettled, parseReceipt, type Receipt } from './receipt.js';
import { backoffMs, decideMutation, type Attempt, type RetryPolicy } from './retry_rules.js';
import { sleep } from './sleep.js';
import { describeFetchFailure, type Exchange, type Reply, type Transport } from './transport.js';

export interface Grant {
  realm: string;
  tenant: string;
  task: string;
  owner: string;
  epoch: number;
  expires_at_ms: number;
}

export interface Settings {
  timeoutMs: number;
  outcomeWaitMs: number;
  retry: RetryPolicy;
}

export interface TaskInit {
  transport: Transport;
  settings: Settings;
  tenant: string;
  task: string;
  owner: string | null;
  grant: Grant | null;
  grantToken: string;
  version: number;
  lease: LeaseGuard;
}

/** Reading receipts while waiting: from 250 ms up to 5 s apart. */
const RECEIPT_POLL: RetryPolicy = { maxAttempts: Number.MAX_SAFE_INTEGER, baseDelayMs: 250, maxDelayMs: 5_000, maxRetryAfterMs: 60_000 };

export function attemptOf(exchange: Exchange): Attempt {
  if (exchange.kind !== 'reply') return { kind: exchange.kind };
  return { kind: 'reply', code: exchange.reply.code, retryAfterMs: exchange.reply.retryAfterMs };
}

/** The typed error for a reply that is not a success. */
export function replyError(reply: Reply): GatewayError {
  const details = { status: reply.status, problem: reply.json, requestId: reply.requestId, headers: reply.headers };
  if (reply.code === null) {
    return new UnexpectedReplyError(`HTTP ${reply.status} without Gateway-Status: not a reply of the gateway`, details);
  }
  if (reply.code === 'rejected_by_provider') {
    return new RejectedByProviderError(`the provider rejected the mutation (HTTP ${reply.status})`, { ...details, body: reply.body });
  }
  return errorForCode(reply.code, details);
}

export class Task implements AsyncDisposable {
  readonly tenant: string;
  readonly task: string;
  /** The owner named at claim; null for a grant passed in by someone else. */
  readonly owner: string | null;
  /** The grant as the claim returned it (null for a grant passed in). */
  readonly grant: Grant | null;
  /** The grant token: sent only to this gateway, as Fence-Grant. */
  readonly grantToken: string;
  readonly #transport: Transport;
  readonly #settings: Settings;
  readonly #lease: LeaseGuard;
  readonly #base: string;
  #version: number;
  #queue: Promise<unknown> = Promise.resolve();
  /** Expected-Version each operation id was first sent with: its exact retry must repeat it. */
  readonly #sentWith = new Map<string, number>();
  #released = false;

  constructor(init: TaskInit) {
    this.tenant = init.tenant;
    this.task = init.task;
    this.owner = init.owner;
    this.grant = init.grant;
    this.grantToken = init.grantToken;
    this.#transport = init.transport;
    this.#settings = init.settings;
    this.#lease = init.lease;
    this.#version = init.version;
    this.#base = `/v1/tenants/${pathSegment('tenant', init.tenant)}/tasks/${pathSegment('task', init.task)}`;
  }

  /** Fires when the lease is lost or may be (reason: a LeaseLostError); nothing is sent after. */
  get leaseLost(): AbortSignal {
    return this.#lease.signal;
  }

  /** The task's business version as far as this handle knows: the next Expected-Version. */
  get version(): number {
    return this.#version;
  }

  /** Milliseconds the lease can still be trusted (Infinity for a grant passed in). */
  get leaseRemainingMs(): number {
    return this.#lease.remainingMs();
  }

  /** One protected mutation through the gateway, with the retry table of docs/api.md. */
  mutate(request: MutationRequest): Promise<MutationResult> {
    return this.#serial(() => this.#mutate(request));
  }

  /** The operation's receipt (current owner only). */
  async receipt(operationId: string): Promise<Receipt> {
    this.#lease.check();
    const exchange = await this.#transport.exchange({
      method: 'GET',
      target: `${this.#base}/operations/${pathSegment('operationId', operationId)}`,
      headers: { 'Fence-Grant': this.grantToken },
      timeoutMs: this.#settings.timeoutMs,
    });
    if (exchange.kind !== 'reply') {
      throw new GatewayUnreachableError(`the receipt could not be read: ${describeFetchFailure(exchange.error)}`, {
        cause: exchange.error,
        requestId: exchange.requestId,
      });
    }
    const receipt = exchange.reply.code === 'ok' ? parseReceipt(exchange.reply.json) : null;
    if (receipt !== null) return receipt;
    throw this.#refusal(exchange.reply);
  }

  /** Ends the lease now (after any mutation in progress). True when the gateway confirmed it. */
  async release(): Promise<boolean> {
    await this.#queue;
    if (this.#released) return false;
    this.#released = true;
    const wasLost = this.#lease.signal.aborted;
    this.#lease.stop(new LeaseLostError('the task handle was released; nothing more is sent with it'));
    if (wasLost) return false;
    for (let made = 1; made <= 3; made++) {
      const exchange = await this.#transport.exchange({
        method: 'POST',
        target: `${this.#base}/release`,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ grant_token: this.grantToken }),
        timeoutMs: this.#settings.timeoutMs,
      });
      if (exchange.kind === 'reply' && exchange.reply.code === 'released') return true;
      const retryable = exchange.kind === 'not_sent' || (exchange.kind === 'reply' && exchange.reply.code === 'authority_unavailable');
      if (!retryable) return false;
      await sleep(backoffMs(made, this.#settings.retry, Math.random()));
    }
    // Not confirmed: the lease then ends at its expiry, which is safe, only later.
    return false;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #mutate(request: MutationRequest): Promise<MutationResult> {
    const m = prepareMutation(request);
    const expected = request.expectedVersion ?? this.#sentWith.get(m.operationId) ?? this.#version;
    if (!Number.isSafeInteger(expected) || expected < 0) {
      throw new InvalidArgumentError(`expectedVersion must be an integer >= 0, not ${JSON.stringify(expected)}`);
    }
    const headers: Record<string, string> = {
      'Fence-Grant': this.grantToken,
      'Idempotency-Key': m.operationId,
      'Expected-Version': String(expected),
    };
    if (m.contentType !== undefined) headers['Content-Type'] = m.contentType;
    const target = `${this.#base}/providers/${pathSegment('provider', m.provider)}${m.path}`;
    const timeoutMs = request.timeoutMs ?? this.#settings.timeoutMs;
    const waitMs = request.outcomeWaitMs ?? this.#settings.outcomeWaitMs;

    for (let made = 1; ; made++) {
      // The fence on this side: once the lease may be over, nothing leaves (LeaseLostError).
      this.#lease.check();
      this.#sentWith.set(m.operationId, expected);
      const exchange = await this.#transport.exchange({ method: m.method, target, headers, body: m.body, timeoutMs });
      const decision = decideMutation(attemptOf(exchange), made, this.#settings.retry, Math.random());
      switch (decision.action) {
        case 'done':
          return this.#result(m.operationId, (exchange as { reply: Reply }).reply);
        case 'retry':
          await sleep(decision.delayMs, this.#lease.signal);
          continue;
        case 'wait_for_receipt': {
          const reason = exchange.kind === 'reply' ? 'unknown_outcome' : 'reply_lost';
          const requestId = exchange.kind === 'reply' ? exchange.reply.requestId : exchange.requestId;
          return this.#awaitOutcome(m.operationId, reason, requestId, waitMs);
        }
        case 'fail':
          if (exchange.kind === 'reply') {
            const refusal = this.#refusal(exchange.reply);
            if (forwardedPastLease(exchange.reply)) throw this.#recordedPastLease(m.operationId, exchange.reply, refusal);
            throw refusal;
          }
          throw new GatewayUnreachableError(
            `the gateway could not be reached after ${made} attempts (${describeFetchFailure(exchange.error)}); nothing was sent`,
            { cause: exchange.error, requestId: exchange.requestId },
          );
      }
    }
  }

  /** A committed or replayed reply; a replayed rejection (no Committed-Version) is thrown. */
  #result(operationId: string, reply: Reply): MutationResult {
    const replayed = reply.code === 'historical_retry';
    const header = reply.headers.get('committed-version');
    if (header === null) {
      if (replayed) {
        throw new RejectedByProviderError(`the provider had rejected this operation (replayed, HTTP ${reply.status})`, {
          status: reply.status,
          requestId: reply.requestId,
          headers: reply.headers,
          body: reply.body,
          replayed: true,
        });
      }
      throw new UnexpectedReplyError('committed without a Committed-Version header', { status: reply.status, requestId: reply.requestId });
    }
    const committed = Number(header);
    this.#version = Math.max(this.#version, committed);
    return new MutationResult(operationId, committed, replayed, reply.status, reply.headers, reply.body, reply.requestId);
  }

  /**
   * The lease ended while the request was forwarded (a grant code with `outcome_recorded`,
   * docs/api.md): it went out and what became of it is recorded. Not "nothing was done": acting
   * again under a new id could act twice. It is read with a new claim's receipt().
   */
  #recordedPastLease(operationId: string, reply: Reply, refusal: GatewayError): OutcomeUnknownError {
    const readItElsewhere = `claim the task again and read receipt('${operationId}') on the new handle`;
    return new OutcomeUnknownError(
      `the lease ended while ${operationId} was being forwarded (${reply.code}): it went out and its outcome is recorded; ${readItElsewhere}, and never send this intent again under a new id`,
      {
        operationId,
        reason: 'lease_ended_while_forwarded',
        receipt: null,
        requestId: reply.requestId,
        status: reply.status,
        problem: reply.json,
        cause: refusal,
        wait: () => Promise.reject(new LeaseLostError(`this handle's lease is lost: ${readItElsewhere}`)),
      },
    );
  }

  /** A refusal as its typed error; a grant refusal also ends this handle's lease. */
  #refusal(reply: Reply): GatewayError {
    const error = replyError(reply);
    if (reply.code !== null && endsLease(reply.code)) {
      this.#lease.lose(new LeaseLostError(`the gateway refused the grant (${reply.code}); the lease is lost`, { cause: error, status: reply.status, problem: reply.json, requestId: reply.requestId }));
    }
    return error;
  }

  /**
   * The request may have reached the provider: never resend it. Read the receipt until it is
   * settled or `waitMs` has passed; then answer as mutate() would, or throw OutcomeUnknownError.
   */
  async #awaitOutcome(operationId: string, reason: 'unknown_outcome' | 'reply_lost', requestId: string | null, waitMs: number): Promise<MutationResult> {
    const until = performance.now() + waitMs;
    let last: Receipt | null = null;
    let lastError: unknown = undefined;
    const unknown = () =>
      new OutcomeUnknownError(
        reason === 'reply_lost'
          ? `the request for ${operationId} was sent and its reply was lost; it is not resent. ${describeReceipt(last)}`
          : `the gateway does not know the outcome of ${operationId} (unknown_outcome); it is held until evidence settles it. ${describeReceipt(last)}`,
        {
          operationId,
          reason,
          receipt: last,
          requestId,
          status: reason === 'unknown_outcome' ? 504 : null,
          cause: lastError,
          wait: (options?: WaitOptions) => this.#awaitOutcome(operationId, reason, requestId, options?.timeoutMs ?? 300_000),
        },
      );
    for (let poll = 1; ; poll++) {
      try {
        last = await this.receipt(operationId);
        if (isSettled(last.state)) return this.#settled(last, requestId);
      } catch (error) {
        // not_found: no record yet (the admission may still be on its way); transient errors: read again.
        if (error instanceof LeaseLostError || (error instanceof GatewayError && endsLease(error.code))) {
          lastError = error;
          throw unknown();
        }
        lastError = error;
      }
      const left = until - performance.now();
      if (left <= 0) throw unknown();
      try {
        await sleep(Math.min(left, backoffMs(poll, RECEIPT_POLL, Math.random())), this.#lease.signal);
      } catch (error) {
        lastError = error;
        throw unknown();
      }
    }
  }

  #settled(receipt: Receipt, requestId: string | null): MutationResult {
    const details = { status: receipt.response?.status ?? null, requestId };
    switch (receipt.state) {
      case 'succeeded': {
        const committed = receipt.committedVersion ?? this.#version;
        this.#version = Math.max(this.#version, committed);
        return new MutationResult(receipt.id, committed, false, receipt.response?.status ?? null, null, null, requestId, receipt);
      }
      case 'rejected':
        throw new RejectedByProviderError(`the provider rejected ${receipt.id} (learned from its receipt)`, details);
      default:
        throw new ProviderUnavailableError(
          `${receipt.id} was not executed (learned from its receipt); an exact retry with the same operationId sends it again`,
          details,
        );
    }
  }
}

function describeReceipt(receipt: Receipt | null): string {
  if (receipt === null) return 'The gateway has no record of it yet; call wait() to keep reading its receipt.';
  return `Its receipt says ${receipt.state}; call wait() to keep reading it.`;
}

/** A grant code after the forward: the gateway recorded the outcome (docs/api.md, "outcome_recorded"). */
function forwardedPastLease(reply: Reply): boolean {
  const problem = reply.json as { outcome_recorded?: unknown } | null;
  return reply.code !== null && endsLease(reply.code) && problem !== null && typeof problem === 'object' && problem.outcome_recorded === true;
}
