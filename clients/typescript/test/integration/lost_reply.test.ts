// A reply lost between the gateway and the client: the client never resends it, learns the
// outcome from the receipt, and the caller's exact retry is answered from the ledger. The
// provider executes the booking once.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Gateway, OutcomeUnknownError } from '../../src/index.js';
import { AGENT_TOKEN, admin, booking, eventually, fresh, gatewayUrl } from '../support.js';

test('a lost reply is not resent; its receipt settles it and the exact retry replays one booking', async () => {
  const gateway = new Gateway({ baseUrl: gatewayUrl(), token: AGENT_TOKEN });
  const taskName = fresh('lost-reply');
  await using task = await gateway.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 60_000 });
  const slot = fresh('slot');
  const booking9 = { provider: 'booking', method: 'POST', path: '/bookings', body: { slot, customer: 'ada' }, operationId: 'book-9am' };

  // The provider answers after 2.5 s; the client gives up on the reply after 0.5 s.
  await booking.fault({ mode: 'delay', delay_ms: 2500, count: 1 });
  const lost = await task.mutate({ ...booking9, timeoutMs: 500, outcomeWaitMs: 0 }).then(
    () => assert.fail('the reply should have been lost'),
    (error: unknown) => error,
  );
  assert.ok(lost instanceof OutcomeUnknownError, `got ${String(lost)}`);
  assert.equal(lost.reason, 'reply_lost');

  const settled = await lost.wait({ timeoutMs: 60_000 });
  assert.equal(settled.committedVersion, 1);
  assert.equal(settled.receipt?.state, 'succeeded');
  assert.equal(settled.body, null, 'the receipt has no provider body');
  assert.equal(task.version, 1);

  // The caller's exact retry (same operation id): the ledger's recorded reply, not a second booking.
  const replay = await task.mutate(booking9);
  assert.equal(replay.replayed, true);
  assert.equal(replay.committedVersion, 1);
  assert.equal((replay.json() as { status: string }).status, 'confirmed');

  const key = await admin.upstreamKey('tenant-a', taskName, 'book-9am');
  assert.equal(await booking.effectsFor(key), 1);
  assert.equal((await booking.requestsContaining(slot)).length, 1, 'the provider was asked once');
});

test('by default mutate waits for the receipt after a lost reply and returns the committed result', async () => {
  const gateway = new Gateway({ baseUrl: gatewayUrl(), token: AGENT_TOKEN });
  const taskName = fresh('lost-reply-wait');
  await using task = await gateway.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 60_000 });
  const slot = fresh('slot');
  await booking.fault({ mode: 'delay', delay_ms: 2000, count: 1 });
  const result = await task.mutate({
    provider: 'booking', method: 'POST', path: '/bookings', body: { slot, customer: 'bo' }, operationId: 'book-once', timeoutMs: 400,
  });
  assert.equal(result.receipt?.state, 'succeeded');
  assert.equal(result.committedVersion, 1);
  // The next operation goes out with the version the receipt proved.
  const next = await task.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot: fresh('slot'), customer: 'bo' }, operationId: 'book-twice' });
  assert.equal(next.committedVersion, 2);
  const key = await admin.upstreamKey('tenant-a', taskName, 'book-once');
  await eventually('the provider is quiescent', async () => (await booking.activity()).in_progress === 0);
  assert.equal(await booking.effectsFor(key), 1);
});
