// The task handle's lease against the real gateway: kept alive past its length by renewals,
// lost (and the signal fired) when an operator revokes it, ended by release.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BusyError, Gateway, LeaseLostError, StaleOwnerError } from '../../src/index.js';
import { AGENT_TOKEN, admin, booking, eventually, fresh, gatewayUrl } from '../support.js';

const gateway = () => new Gateway({ baseUrl: gatewayUrl(), token: AGENT_TOKEN });

test('renewals keep a short lease alive well past its length', async () => {
  const taskName = fresh('keep-alive');
  await using task = await gateway().claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 1_500 });
  const first = (await admin.taskView('tenant-a', taskName)).expires_at_ms;
  // Condition, not a clock: the gateway's expiry has moved on at least three lease lengths.
  await eventually('three lease lengths of renewals', async () => (await admin.taskView('tenant-a', taskName)).expires_at_ms > first + 4_500);
  assert.equal(task.leaseLost.aborted, false);
  const result = await task.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot: fresh('slot'), customer: 'gus' }, operationId: 'late-but-held' });
  assert.equal(result.committedVersion, 1);
});

test('a revoked lease fires leaseLost at the next renewal and nothing is sent after', async () => {
  const taskName = fresh('revoked');
  const task = await gateway().claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 1_500 });
  await admin.revoke('tenant-a', taskName);
  await eventually('leaseLost fired', () => task.leaseLost.aborted);
  assert.ok(task.leaseLost.reason instanceof LeaseLostError);
  const slot = fresh('slot');
  const error = await task.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot, customer: 'hal' }, operationId: 'after-revoke' }).catch((e: unknown) => e);
  assert.ok(error instanceof LeaseLostError, `got ${String(error)}`);
  assert.deepEqual(await admin.rejections('tenant-a', taskName), []);
  assert.equal((await booking.requestsContaining(slot)).length, 0);
  assert.equal(await task.release(), false, 'nothing to release');
});

test('release ends the lease: the next claim is granted, the old handle refuses to send', async () => {
  const taskName = fresh('released');
  const g = gateway();
  const task = await g.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-1', leaseMs: 60_000 });
  const second = await g.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-2', leaseMs: 60_000 }).catch((e: unknown) => e);
  assert.ok(second instanceof BusyError);
  assert.equal(await task.release(), true);
  assert.equal(task.leaseLost.aborted, true);
  await using next = await g.claim({ tenant: 'tenant-a', task: taskName, owner: 'agent-2', leaseMs: 60_000 });
  assert.ok(next.grant!.epoch > task.grant!.epoch);
  await assert.rejects(task.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: {}, operationId: 'x' }), LeaseLostError);
});

test('a grant passed in: the gateway fences it, and the refusal ends the handle', async () => {
  const taskName = fresh('adopted');
  const g = gateway();
  const holder = await g.claim({ tenant: 'tenant-a', task: taskName, owner: 'host', leaseMs: 60_000 });
  const adopted = await g.adoptGrant({ tenant: 'tenant-a', task: taskName, grantToken: holder.grantToken });
  assert.equal(adopted.version, 0);
  const ok = await adopted.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot: fresh('slot'), customer: 'ida' }, operationId: 'by-adopted' });
  assert.equal(ok.committedVersion, 1);
  await holder.release();
  await using successor = await g.claim({ tenant: 'tenant-a', task: taskName, owner: 'next', leaseMs: 60_000 });
  const refused = await adopted.mutate({ provider: 'booking', method: 'POST', path: '/bookings', body: { slot: fresh('slot'), customer: 'ida' }, operationId: 'by-adopted-2' }).catch((e: unknown) => e);
  assert.ok(refused instanceof StaleOwnerError || (refused as { code?: string }).code === 'expired_owner', `got ${String(refused)}`);
  assert.equal(adopted.leaseLost.aborted, true);
  assert.equal(successor.version, 1);
});
