// An operation held unknown (the provider executed it and dropped the connection) is settled by
// the gateway's provider lookup while the client waits on its receipt; the exact retry is not
// resent either (resolved_without_reply: the receipt answers it).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Gateway, UnresolvedOperationError, VersionConflictError } from '../../src/index.js';
import { AGENT_TOKEN, admin, booking, fresh, gatewayUrl } from '../support.js';

test('a held operation resolved by lookup while the client waits', async () => {
  const gateway = new Gateway({ baseUrl: gatewayUrl(), token: AGENT_TOKEN, outcomeWaitMs: 90_000 });
  const taskName = fresh('held');
  await using task = await gateway.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 60_000 });
  const slot = fresh('slot');
  const op = { provider: 'booking', method: 'POST', path: '/bookings', body: { slot, customer: 'cy' }, operationId: 'book-held' };

  await booking.fault({ mode: 'drop_after_execute', count: 1 });
  const result = await task.mutate(op);
  assert.equal(result.receipt?.state, 'succeeded');
  assert.equal(result.receipt?.resolution?.source, 'lookup');
  assert.equal(result.committedVersion, 1);

  // The exact retry: settled by evidence, so nothing to replay and nothing resent.
  const again = await task.mutate(op);
  assert.equal(again.committedVersion, 1);
  assert.equal(again.receipt?.resolution?.source, 'lookup');

  const key = await admin.upstreamKey('tenant-a', taskName, 'book-held');
  assert.equal(await booking.effectsFor(key), 1);
  assert.equal((await booking.requestsContaining(slot)).length, 1);
});

test('while an operation is held, another one on the task is refused with a typed error', async () => {
  const gateway = new Gateway({ baseUrl: gatewayUrl(), token: AGENT_TOKEN, outcomeWaitMs: 0 });
  const taskName = fresh('held-other');
  await using task = await gateway.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 60_000 });
  await booking.fault({ mode: 'drop_after_execute', count: 1 });
  const held = await task.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot: fresh('slot'), customer: 'di' }, operationId: 'first' }).catch((e: unknown) => e);
  assert.equal((held as { code?: string }).code, 'unknown_outcome');
  const other = await task.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot: fresh('slot'), customer: 'di' }, operationId: 'second' }).catch((e: unknown) => e);
  // Still held (unresolved_operation); or, if a lookup already settled the first one, the handle's
  // version is behind what the lookup committed (version_conflict). Typed either way.
  assert.ok(other instanceof UnresolvedOperationError || other instanceof VersionConflictError, `got ${String(other)}`);
  assert.equal(other.status, other instanceof UnresolvedOperationError ? 409 : 412);
  assert.equal(typeof other.requestId, 'string');
  assert.equal(other.problem?.['code'], other.code);
});
