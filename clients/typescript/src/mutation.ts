// A mutation as the caller describes it, turned into the exact bytes sent (so every retry of it
// is byte-identical, as the gateway's payload fingerprint requires), and its result.

import { InvalidArgumentError, requireLabel, requireProviderPath } from './labels.js';
import type { Receipt } from './receipt.js';

export type Body = string | Uint8Array | Record<string, unknown> | unknown[] | null | undefined;

export interface MutationRequest {
  provider: string;
  /** Any method the provider protects: POST, PUT, PATCH, DELETE, ... */
  method: string;
  /** The provider path (and query), starting with "/". */
  path: string;
  /** An object or array is sent as JSON; a string or bytes as given. */
  body?: Body;
  /** The Idempotency-Key: one per intended effect. The same id is the same intent. */
  operationId: string;
  /** Content-Type; defaults to application/json for objects and arrays. */
  contentType?: string;
  /**
   * Expected-Version, only to recover an operation first sent by another process (its exact
   * retry needs the version it was first sent with). Otherwise the task's tracked version.
   */
  expectedVersion?: number;
  /** Per-attempt timeout in ms (default: the gateway's timeoutMs). */
  timeoutMs?: number;
  /** How long to wait for the receipt when the outcome is not known (default: the gateway's). */
  outcomeWaitMs?: number;
}

export interface PreparedMutation {
  provider: string;
  method: string;
  path: string;
  operationId: string;
  body: Uint8Array | undefined;
  contentType: string | undefined;
}

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function prepareMutation(req: MutationRequest): PreparedMutation {
  if (typeof req !== 'object' || req === null) throw new InvalidArgumentError('mutate needs an object');
  const provider = requireLabel('provider', req.provider);
  const operationId = requireLabel('operationId', req.operationId);
  if (typeof req.method !== 'string' || !METHOD.test(req.method)) {
    throw new InvalidArgumentError(`method must be an HTTP method token, not ${JSON.stringify(req.method)}`);
  }
  const method = req.method.toUpperCase();
  if (method === 'GET' || method === 'HEAD') {
    throw new InvalidArgumentError(`${method} is not a mutation; read through the gateway without mutate()`);
  }
  const path = requireProviderPath(req.path);
  let body: Uint8Array | undefined;
  let contentType = req.contentType;
  const b = req.body;
  if (b === undefined || b === null) body = undefined;
  else if (typeof b === 'string') body = new TextEncoder().encode(b);
  else if (b instanceof Uint8Array) body = b;
  else if (typeof b === 'object') {
    body = new TextEncoder().encode(JSON.stringify(b));
    contentType ??= 'application/json';
  } else throw new InvalidArgumentError('body must be a string, bytes, an object or an array');
  return { provider, method, path, operationId, body, contentType };
}

/** A committed mutation: the provider's reply (or, after a lost reply, what the receipt proved). */
export class MutationResult {
  constructor(
    readonly operationId: string,
    /** The task's version after this operation (Committed-Version). */
    readonly committedVersion: number,
    /** True when the gateway answered from its ledger (historical_retry): executed once, earlier. */
    readonly replayed: boolean,
    /** The provider's status; null when only a receipt settled it without a recorded reply. */
    readonly status: number | null,
    readonly headers: Headers | null,
    /** The provider's body; null when the outcome was learned from the receipt. */
    readonly body: Uint8Array | null,
    readonly requestId: string | null,
    /** Set when the reply was lost and the receipt settled the outcome. */
    readonly receipt: Receipt | null = null,
  ) {}

  get outcome(): 'committed' {
    return 'committed';
  }

  text(): string {
    return this.body === null ? '' : new TextDecoder().decode(this.body);
  }

  json<T = unknown>(): T {
    if (this.body === null) throw new Error('no provider body: the outcome was learned from the receipt (replay it with the same operationId to get it)');
    return JSON.parse(this.text()) as T;
  }
}
