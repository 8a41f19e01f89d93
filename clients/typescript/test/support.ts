// What the integration tests share: the stack's addresses (test/stack.sh exports them), the demo
// provider's control API, the operator's views, and polling a condition with a generous timeout.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set: run the tests through clients/typescript/test.sh`);
  return value;
}

export const gatewayUrl = () => env('GATEWAY_URL');
export const AGENT_TOKEN = 'dev-agent-token-a';
export const OPERATOR_TOKEN = 'dev-operator-token';

/** Names no earlier run used: tasks and booking slots keep their records. */
export function fresh(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

async function json(url: string, init?: RequestInit): Promise<any> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

/** The demo provider's control API (docs/operations.md, "The demo providers' control API"). */
export const booking = {
  url: () => env('BOOKING_CONTROL_URL'),
  async fault(plan: Record<string, unknown>): Promise<void> {
    const r = await json(`${booking.url()}/__test/faults`, { method: 'POST', body: JSON.stringify(plan) });
    if (r.status !== 200) throw new Error(`fault plan refused: ${JSON.stringify(r.body)}`);
  },
  async effectsFor(upstreamKey: string): Promise<number> {
    const r = await json(`${booking.url()}/__test/effects`);
    return r.body.by_key[upstreamKey] ?? 0;
  },
  /** Every business request the provider read whose body contains `needle`. */
  async requestsContaining(needle: string): Promise<unknown[]> {
    const r = await json(`${booking.url()}/__test/requests`);
    return r.body.requests.filter((q: { body: string }) => typeof q.body === 'string' && q.body.includes(needle));
  },
  async activity(): Promise<{ in_progress: number; held: number }> {
    return (await json(`${booking.url()}/__test/activity`)).body;
  },
};

const operator = { Authorization: `Bearer ${OPERATOR_TOKEN}` };

export const admin = {
  /** The operator's view of an operation (404: the gateway has no such operation). */
  async operation(tenant: string, task: string, id: string): Promise<{ status: number; body: any }> {
    return json(`${gatewayUrl()}/v1/admin/operation?tenant=${encodeURIComponent(tenant)}&task=${encodeURIComponent(task)}&id=${encodeURIComponent(id)}`, { headers: operator });
  },
  async upstreamKey(tenant: string, task: string, id: string): Promise<string> {
    const r = await admin.operation(tenant, task, id);
    if (r.status !== 200) throw new Error(`no operation ${id}: ${JSON.stringify(r.body)}`);
    return r.body.operation.upstream_key;
  },
  async rejections(tenant: string, task: string): Promise<any[]> {
    const r = await json(`${gatewayUrl()}/v1/admin/rejections?tenant=${encodeURIComponent(tenant)}&task=${encodeURIComponent(task)}`, { headers: operator });
    return r.body.rejections;
  },
  async taskView(tenant: string, task: string): Promise<any> {
    return (await json(`${gatewayUrl()}/v1/tenants/${tenant}/tasks/${task}`, { headers: operator })).body;
  },
  async revoke(tenant: string, task: string): Promise<void> {
    await json(`${gatewayUrl()}/v1/admin/tasks/${tenant}/${task}/revoke`, { method: 'POST', headers: operator });
  },
  /** A counter of the gateway's /metrics (0 when absent). */
  async metric(name: string, labels: string): Promise<number> {
    const text = await (await fetch(`${gatewayUrl()}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  },
  async ready(): Promise<boolean> {
    try {
      return (await fetch(`${gatewayUrl()}/readyz`)).status === 200;
    } catch {
      return false;
    }
  },
};

/** Polls `condition` until it holds; fails after `timeoutMs` (generous: this is no speed test). */
export async function eventually(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > until) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const run = promisify(execFile);

/** scripts/pg.sh stop / start on the stack's own cluster. */
export const authority = {
  async stop(): Promise<void> {
    await run(env('GATEWAY_TEST_PG_SCRIPT'), ['stop', env('GATEWAY_TEST_PG_DIR')]);
  },
  async start(): Promise<void> {
    await run(env('GATEWAY_TEST_PG_SCRIPT'), ['start', env('GATEWAY_TEST_PG_DIR'), env('GATEWAY_TEST_PG_PORT')], {
      env: { ...process.env, PG_EXTRA_OPTS: '-c fsync=off -c synchronous_commit=off' },
    });
  },
};
