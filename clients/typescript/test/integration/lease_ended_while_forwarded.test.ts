// A lease that ends while its request is at the provider: the gateway records the outcome and
// answers the grant code with outcome_recorded. The client must not take that for "nothing was
// done": it throws OutcomeUnknownError, and a new claim reads what the operation became.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Gateway, OutcomeUnknownError } from '../../src/index.js';
import { AGENT_TOKEN, admin, booking, eventually, fresh, gatewayUrl } from '../support.js';

test('a grant code after the forward is an unknown outcome, read with a new claim, done once', async () => {
  const g = new Gateway({ baseUrl: gatewayUrl(), token: AGENT_TOKEN });
  const taskName = fresh('lease-ended');
  const task = await g.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 600_000 });
  // The provider takes 2.5 s; the operator ends the lease while it works.
  await booking.fault({ mode: 'delay', delay_ms: 2500, count: 1 });
  const sent = task
    .mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot: fresh('slot'), customer: 'ida' }, operationId: 'book-9am' })
    .catch((e: unknown) => e);
  await eventually('the provider to be working on it', async () => (await booking.activity()).in_progress === 1);
  await admin.revoke('tenant-a', taskName);
  const error = await sent;
  assert.ok(error instanceof OutcomeUnknownError, `got ${String(error)}`);
  assert.equal(error.reason, 'lease_ended_while_forwarded');
  assert.equal(error.problem?.['code'], 'expired_owner');
  assert.equal(error.problem?.['outcome_recorded'], true);
  assert.equal(task.leaseLost.aborted, true);

  await using again = await g.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 60_000 });
  const receipt = await again.receipt('book-9am');
  assert.equal(receipt.state, 'succeeded');
  assert.equal(await booking.effectsFor(await admin.upstreamKey('tenant-a', taskName, 'book-9am')), 1);
});
