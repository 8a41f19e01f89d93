// The authority (PostgreSQL) goes down while a mutation is being made and comes back: the client
// retries the same key after Retry-After, and the provider executes it once.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuthorityUnavailableError, Gateway } from '../../src/index.js';
import { AGENT_TOKEN, admin, authority, booking, eventually, fresh, gatewayUrl } from '../support.js';

const refusals = () => admin.metric('gateway_replies_total', 'code="authority_unavailable"');

test('authority down and back: the same key is retried and executes once', async () => {
  // Enough attempts for the database's restart: each waits the gateway's Retry-After (1 s).
  const gateway = new Gateway({ baseUrl: gatewayUrl(), token: AGENT_TOKEN, retry: { maxAttempts: 120 } });
  const taskName = fresh('authority');
  await using task = await gateway.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 120_000 });
  const slot = fresh('slot');
  const before = await refusals();
  await authority.stop();
  try {
    const pending = task.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot, customer: 'eve' }, operationId: 'book-through-outage' });
    await eventually('the gateway refused for the authority', async () => (await refusals()) > before);
    assert.equal((await booking.requestsContaining(slot)).length, 0, 'nothing forwarded while the authority is down');
    await authority.start();
    const result = await pending;
    assert.equal(result.committedVersion, 1);
  } finally {
    await authority.start();
  }
  await eventually('the gateway is ready again', () => admin.ready());
  const key = await admin.upstreamKey('tenant-a', taskName, 'book-through-outage');
  assert.equal(await booking.effectsFor(key), 1);
});

test('authority down past the retry budget: a typed error, and nothing forwarded', async () => {
  const gateway = new Gateway({ baseUrl: gatewayUrl(), token: AGENT_TOKEN, retry: { maxAttempts: 2 } });
  const taskName = fresh('authority-gone');
  await using task = await gateway.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 120_000 });
  const slot = fresh('slot');
  await authority.stop();
  try {
    const error = await task.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot, customer: 'fay' }, operationId: 'book-refused' }).catch((e: unknown) => e);
    assert.ok(error instanceof AuthorityUnavailableError, `got ${String(error)}`);
    assert.equal(error.status, 503);
    assert.equal(error.headers?.get('retry-after'), '1');
  } finally {
    await authority.start();
  }
  await eventually('the gateway is ready again', () => admin.ready());
  assert.equal((await booking.requestsContaining(slot)).length, 0);
});
