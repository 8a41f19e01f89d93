// One HTTP exchange with the gateway, reported as what it came to (not sent / reply lost /
// reply), never retried here. Every URL is built from the gateway's base URL, redirects are not
// followed, so the agent token and the grant token go to the gateway and nowhere else.

import { randomUUID } from 'node:crypto';
import { describeFetchFailure, failedBeforeSending } from './fetch_failure.js';
import { InvalidArgumentError } from './labels.js';
import { parseRetryAfter } from './retry_rules.js';

export interface Reply {
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** Gateway-Status, null when the reply had none. */
  code: string | null;
  requestId: string | null;
  retryAfterMs: number | null;
  /** The JSON body when it is an object (problem or success body), else null. */
  json: Record<string, unknown> | null;
}

export type Exchange =
  | { kind: 'not_sent'; error: unknown; requestId: string }
  | { kind: 'reply_lost'; error: unknown; requestId: string }
  | { kind: 'reply'; reply: Reply };

export interface Outgoing {
  method: string;
  /** Path and query below the base URL, already encoded, starting with "/". */
  target: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  timeoutMs: number;
}

/** Checks and normalizes a base URL: http(s), no credentials, query or fragment; no trailing "/". */
export function normalizeBaseUrl(value: unknown): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new InvalidArgumentError(`baseUrl is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError(`baseUrl must be http: or https:, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new InvalidArgumentError('baseUrl must not contain credentials, a query or a fragment');
  }
  return url.href.replace(/\/+$/, '');
}

export class Transport {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async exchange(out: Outgoing): Promise<Exchange> {
    // Our own X-Request-Id, so a request whose reply is lost can still be found in the gateway's log.
    const requestId = randomUUID().replaceAll('-', '');
    const headers: Record<string, string> = {
      ...out.headers,
      Authorization: `Bearer ${this.token}`,
      'X-Request-Id': requestId,
    };
    let response: Response;
    try {
      response = await fetch(this.baseUrl + out.target, {
        method: out.method,
        headers,
        body: out.body ?? null,
        redirect: 'manual',
        signal: AbortSignal.timeout(out.timeoutMs),
      });
    } catch (error) {
      return failedBeforeSending(error) ? { kind: 'not_sent', error, requestId } : { kind: 'reply_lost', error, requestId };
    }
    let body: Uint8Array;
    try {
      body = new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      return { kind: 'reply_lost', error, requestId };
    }
    return {
      kind: 'reply',
      reply: {
        status: response.status,
        headers: response.headers,
        body,
        code: response.headers.get('gateway-status'),
        requestId: response.headers.get('x-request-id') ?? requestId,
        retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), Date.now()),
        json: parseObject(response.headers.get('content-type'), body),
      },
    };
  }
}

function parseObject(contentType: string | null, body: Uint8Array): Record<string, unknown> | null {
  if (contentType === null || !/json/i.test(contentType) || body.length === 0) return null;
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(body));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export { describeFetchFailure };
