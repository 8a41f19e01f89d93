// The entry point: a gateway's base URL and an agent token. Claims tasks (each a Task handle with
// its lease kept alive), or wraps a grant someone else holds.

import { GatewayUnreachableError, LeaseLostError, UnexpectedReplyError } from './errors.js';
import { BorrowedLease, KeepAlive, type RenewalOutcome } from './keep_alive.js';
import { InvalidArgumentError, pathSegment, requireLabel, requirePositiveInt } from './labels.js';
import { checkLeaseTiming, defaultSafetyMarginMs } from './lease_clock.js';
import { DEFAULT_RETRY_POLICY, decideClaim, type RetryPolicy } from './retry_rules.js';
import { sleep } from './sleep.js';
import { Task, attemptOf, replyError, type Grant, type Settings } from './task.js';
import { Transport, describeFetchFailure, normalizeBaseUrl } from './transport.js';

export interface GatewayOptions {
  /** The gateway's base URL, e.g. http://127.0.0.1:8080. Tokens are sent to it and nowhere else. */
  baseUrl: string;
  /** The agent token (Authorization: Bearer). */
  token: string;
  /** Timeout of each request in ms (default 30 s). A mutation that times out is never resent. */
  timeoutMs?: number;
  /** How long mutate() reads the receipt of an operation whose outcome is unknown (default 30 s). */
  outcomeWaitMs?: number;
  /** Bounds of the retries docs/api.md allows (same key, backoff with jitter, Retry-After). */
  retry?: Partial<RetryPolicy>;
}

export interface ClaimOptions {
  tenant: string;
  task: string;
  owner: string;
  /** The lease in ms; renewed at about a third of it. */
  leaseMs: number;
  /** Subtracted from the lease when deciding it may be over (default: a tenth, 100 ms to 5 s). */
  safetyMarginMs?: number;
}

export interface AdoptOptions {
  tenant: string;
  task: string;
  /** A grant token someone else claimed and keeps renewing. */
  grantToken: string;
  /** The task's version, if the holder knows it; otherwise read from the task view. */
  version?: number;
}

export class Gateway {
  readonly baseUrl: string;
  readonly #transport: Transport;
  readonly #settings: Settings;

  constructor(options: GatewayOptions) {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('new Gateway needs {baseUrl, token}');
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    if (typeof options.token !== 'string' || !/^[\x21-\x7e]+$/.test(options.token)) {
      throw new InvalidArgumentError('token must be a non-empty string of visible ASCII');
    }
    this.#transport = new Transport(this.baseUrl, options.token);
    const retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    requirePositiveInt('retry.maxAttempts', retry.maxAttempts);
    this.#settings = {
      timeoutMs: requirePositiveInt('timeoutMs', options.timeoutMs ?? 30_000),
      outcomeWaitMs: Math.max(0, options.outcomeWaitMs ?? 30_000),
      retry,
    };
  }

  /** Claims a task: a handle whose lease is renewed until release() (or `await using` ends). */
  async claim(options: ClaimOptions): Promise<Task> {
    const tenant = requireLabel('tenant', options.tenant);
    const task = requireLabel('task', options.task);
    const owner = requireLabel('owner', options.owner);
    const leaseMs = requirePositiveInt('leaseMs', options.leaseMs);
    const safetyMarginMs = options.safetyMarginMs ?? defaultSafetyMarginMs(leaseMs);
    checkLeaseTiming(leaseMs, safetyMarginMs);
    const base = `/v1/tenants/${pathSegment('tenant', tenant)}/tasks/${pathSegment('task', task)}`;
    const body = JSON.stringify({ owner, lease_ms: leaseMs });

    for (let made = 1; ; made++) {
      const sentAt = performance.now();
      const exchange = await this.#transport.exchange({
        method: 'POST',
        target: `${base}/claim`,
        headers: { 'Content-Type': 'application/json' },
        body,
        timeoutMs: this.#settings.timeoutMs,
      });
      const decision = decideClaim(attemptOf(exchange), made, this.#settings.retry, Math.random());
      if (decision.action === 'retry') {
        await sleep(decision.delayMs);
        continue;
      }
      if (exchange.kind !== 'reply') {
        const what = exchange.kind === 'not_sent' ? 'could not be reached; nothing was sent' : 'did not answer the claim (a grant may have been issued that nobody holds: the task is then busy until its lease ends)';
        throw new GatewayUnreachableError(`the gateway ${what}: ${describeFetchFailure(exchange.error)}`, {
          cause: exchange.error,
          requestId: exchange.requestId,
        });
      }
      const reply = exchange.reply;
      if (decision.action !== 'done') throw replyError(reply);
      const grant = reply.json?.['grant'] as Grant | undefined;
      const grantToken = reply.json?.['grant_token'];
      const version = reply.json?.['version'];
      if (typeof grantToken !== 'string' || typeof version !== 'number' || typeof grant !== 'object') {
        throw new UnexpectedReplyError('a granted claim without grant, grant_token and version', { status: reply.status, requestId: reply.requestId });
      }
      const lease = new KeepAlive({
        leaseMs,
        safetyMarginMs,
        claimSentAt: sentAt,
        renew: (timeoutMs) => this.#renew(base, grantToken, leaseMs, timeoutMs),
      });
      return new Task({ transport: this.#transport, settings: this.#settings, tenant, task, owner, grant, grantToken, version, lease });
    }
  }

  /**
   * A handle for a grant someone else holds and renews (e.g. an MCP host). It does not renew;
   * the gateway's fence refuses it once it expires, and that refusal fires leaseLost.
   */
  async adoptGrant(options: AdoptOptions): Promise<Task> {
    const tenant = requireLabel('tenant', options.tenant);
    const task = requireLabel('task', options.task);
    if (typeof options.grantToken !== 'string' || options.grantToken.length === 0) {
      throw new InvalidArgumentError('grantToken must be a non-empty string');
    }
    const version = options.version ?? (await this.#readVersion(tenant, task));
    return new Task({
      transport: this.#transport,
      settings: this.#settings,
      tenant,
      task,
      owner: null,
      grant: null,
      grantToken: options.grantToken,
      version,
      lease: new BorrowedLease(),
    });
  }

  async #readVersion(tenant: string, task: string): Promise<number> {
    const exchange = await this.#transport.exchange({
      method: 'GET',
      target: `/v1/tenants/${pathSegment('tenant', tenant)}/tasks/${pathSegment('task', task)}`,
      timeoutMs: this.#settings.timeoutMs,
    });
    if (exchange.kind !== 'reply') {
      throw new GatewayUnreachableError(`the task view could not be read: ${describeFetchFailure(exchange.error)}`, { cause: exchange.error });
    }
    const version = exchange.reply.json?.['version'];
    if (exchange.reply.code === 'ok' && typeof version === 'number') return version;
    throw replyError(exchange.reply);
  }

  async #renew(base: string, grantToken: string, leaseMs: number, timeoutMs: number): Promise<RenewalOutcome> {
    const exchange = await this.#transport.exchange({
      method: 'POST',
      target: `${base}/renew`,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ grant_token: grantToken, lease_ms: leaseMs }),
      timeoutMs: Math.min(timeoutMs, this.#settings.timeoutMs),
    });
    return { attempt: attemptOf(exchange), error: exchange.kind === 'reply' ? replyError(exchange.reply) : null };
  }
}

export { LeaseLostError };
