// Who holds the task the tools act on. The server's own claim, made on the first tool call and
// kept alive by the client; when its lease is lost the handle is dropped (the call that finds it
// lost reports so and sends nothing) and the next call claims again, with a new epoch. Or the
// host's grant, passed in the config: then the host renews it and the gateway's fence ends it.

import { Gateway, OperationConflictError, type MutationRequest, type MutationResult, type Task } from 'write-gateway-client';
import type { Config } from './config.js';

export class Ownership {
  readonly #gateway: Gateway;
  readonly #config: Config;
  #task: Promise<Task> | null = null;

  constructor(config: Config) {
    this.#config = config;
    this.#gateway = new Gateway({
      baseUrl: config.baseUrl,
      token: config.token,
      timeoutMs: config.timeoutMs,
      outcomeWaitMs: config.outcomeWaitMs,
      retry: { maxAttempts: config.maxAttempts },
    });
  }

  /** The task handle, claimed (or adopted) on first use. */
  async task(): Promise<Task> {
    if (this.#task === null) {
      const o = this.#config.ownership;
      this.#task =
        o.kind === 'claim'
          ? this.#gateway.claim({ tenant: o.tenant, task: o.task, owner: o.owner, leaseMs: o.leaseMs })
          : this.#gateway.adoptGrant({ tenant: o.tenant, task: o.task, grantToken: o.grantToken });
      this.#task.catch(() => (this.#task = null));
    }
    return this.#task;
  }

  /**
   * One mutation. An operation_conflict on a re-issued call whose first send this process did
   * not make (a restart) is usually the same intent sent with a newer Expected-Version: the
   * receipt names the version it was first sent with, and the exact retry with it is answered
   * from the ledger. A truly different payload conflicts again and is reported.
   */
  async mutate(request: MutationRequest): Promise<MutationResult> {
    const task = await this.task();
    try {
      return await task.mutate(request);
    } catch (error) {
      if (task.leaseLost.aborted && this.#task !== null && (await this.#task) === task) this.#task = null;
      if (!(error instanceof OperationConflictError)) throw error;
      const receipt = await task.receipt(request.operationId);
      if (receipt.expectedVersion === task.version) throw error;
      return task.mutate({ ...request, expectedVersion: receipt.expectedVersion });
    }
  }

  async close(): Promise<void> {
    const task = this.#task;
    this.#task = null;
    if (task !== null && this.#config.ownership.kind === 'claim') await (await task.catch(() => null))?.release();
  }
}
