// Lease arithmetic: deadlines counted from the send time, renewal at a third, retries that fit.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../src/labels.js';
import {
  checkLeaseTiming,
  defaultSafetyMarginMs,
  extendedDeadline,
  leaseDeadline,
  leaseTrusted,
  renewalDelayMs,
  renewalRetryDelayMs,
} from '../../src/lease_clock.js';

test('the deadline counts from when the claim was sent, minus the margin', () => {
  assert.equal(leaseDeadline(1_000, 30_000, 3_000), 28_000);
  assert.equal(leaseTrusted(27_999, 28_000), true);
  assert.equal(leaseTrusted(28_000, 28_000), false);
});

test('a renewal only ever moves the deadline later', () => {
  assert.equal(extendedDeadline(28_000, 11_000, 30_000, 3_000), 38_000);
  // A renewal sent before the claim's send time (impossible) or a shorter lease never shortens.
  assert.equal(extendedDeadline(28_000, 0, 30_000, 3_000), 28_000);
});

test('renewal at a third of the lease, within 10% either way', () => {
  assert.equal(renewalDelayMs(30_000, 0.5), 10_000);
  assert.equal(renewalDelayMs(30_000, 0), 9_000);
  assert.equal(renewalDelayMs(30_000, 1), 11_000);
  for (const lease of [3, 300, 3_000, 86_400_000]) {
    const late = renewalDelayMs(lease, 1);
    assert.ok(late < leaseDeadline(0, lease, defaultSafetyMarginMs(lease)) || lease < 10, `lease ${lease}`);
  }
});

test('the default margin is a tenth of the lease, between 100 ms and 5 s', () => {
  assert.equal(defaultSafetyMarginMs(30_000), 3_000);
  assert.equal(defaultSafetyMarginMs(500), 100);
  assert.equal(defaultSafetyMarginMs(3_600_000), 5_000);
});

test('a margin must leave room for renewals', () => {
  checkLeaseTiming(30_000, 3_000);
  assert.throws(() => checkLeaseTiming(1_000, 500), InvalidArgumentError);
  assert.throws(() => checkLeaseTiming(1_000, -1), InvalidArgumentError);
  assert.throws(() => checkLeaseTiming(1_000, 1.5), InvalidArgumentError);
});

test('after a failed renewal, the next try fits in the time left, and none is left past the deadline', () => {
  assert.equal(renewalRetryDelayMs(28_000, 28_000, 1, 0.5), null);
  assert.equal(renewalRetryDelayMs(29_000, 28_000, 1, 0.5), null);
  assert.equal(renewalRetryDelayMs(0, 28_000, 1, 1), 100);
  assert.equal(renewalRetryDelayMs(0, 28_000, 20, 1), 2_000);
  assert.equal(renewalRetryDelayMs(27_900, 28_000, 20, 1), 50);
});
