// The retry table of docs/api.md, row by row: what the client does after each kind of attempt.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_RETRY_POLICY,
  backoffMs,
  decideClaim,
  decideMutation,
  decideRenewal,
  parseRetryAfter,
  type Attempt,
} from '../../src/retry_rules.js';

const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 10_000 };
const reply = (code: string | null, retryAfterMs: number | null = null): Attempt => ({ kind: 'reply', code, retryAfterMs });

test('mutation: the codes docs/api.md retries with the same key are retried', () => {
  for (const code of ['authority_unavailable', 'operation_in_flight', 'provider_unavailable']) {
    const d = decideMutation(reply(code), 1, policy, 0.5);
    assert.equal(d.action, 'retry', code);
  }
  assert.equal(decideMutation({ kind: 'not_sent' }, 1, policy, 0.5).action, 'retry');
});

test('mutation: never resent after a lost reply, unknown_outcome or a resolution by evidence', () => {
  assert.deepEqual(decideMutation({ kind: 'reply_lost' }, 1, policy, 0.5), { action: 'wait_for_receipt' });
  assert.deepEqual(decideMutation(reply('unknown_outcome'), 1, policy, 0.5), { action: 'wait_for_receipt' });
  assert.deepEqual(decideMutation(reply('resolved_without_reply'), 1, policy, 0.5), { action: 'wait_for_receipt' });
});

test('mutation: successes are done; every other code goes to the caller', () => {
  assert.equal(decideMutation(reply('committed'), 1, policy, 0.5).action, 'done');
  assert.equal(decideMutation(reply('historical_retry'), 1, policy, 0.5).action, 'done');
  for (const code of ['rejected_by_provider', 'stale_owner', 'expired_owner', 'version_conflict', 'operation_conflict', 'unresolved_operation', 'invalid_request', 'busy', null]) {
    assert.equal(decideMutation(reply(code), 1, policy, 0.5).action, 'fail', String(code));
  }
});

test('mutation: retries are bounded; an in-flight operation then waits for its receipt', () => {
  assert.equal(decideMutation(reply('authority_unavailable'), 4, policy, 0.5).action, 'fail');
  assert.equal(decideMutation({ kind: 'not_sent' }, 4, policy, 0.5).action, 'fail');
  assert.equal(decideMutation(reply('operation_in_flight'), 4, policy, 0.5).action, 'wait_for_receipt');
});

test('Retry-After is honoured (plus a little jitter) and too long a one is not waited for', () => {
  const d = decideMutation(reply('authority_unavailable', 1_000), 1, policy, 1);
  assert.deepEqual(d, { action: 'retry', delayMs: 1_100 });
  const d0 = decideMutation(reply('provider_unavailable', 2_000), 1, policy, 0);
  assert.deepEqual(d0, { action: 'retry', delayMs: 2_000 });
  assert.equal(decideMutation(reply('provider_unavailable', 10_001), 1, policy, 0.5).action, 'fail');
});

test('backoff doubles from the base up to the cap, jittered within its upper half', () => {
  assert.equal(backoffMs(1, policy, 0), 50);
  assert.equal(backoffMs(1, policy, 1), 100);
  assert.equal(backoffMs(3, policy, 1), 400);
  assert.equal(backoffMs(10, policy, 1), 1_000);
  assert.equal(backoffMs(10, policy, 0), 500);
  assert.equal(backoffMs(2, policy, Number.NaN), 150);
});

test('claim: only what issued no grant is retried; a lost reply is not', () => {
  assert.equal(decideClaim(reply('granted'), 1, policy, 0.5).action, 'done');
  assert.equal(decideClaim(reply('authority_unavailable', 1_000), 1, policy, 0.5).action, 'retry');
  assert.equal(decideClaim({ kind: 'not_sent' }, 1, policy, 0.5).action, 'retry');
  assert.equal(decideClaim({ kind: 'reply_lost' }, 1, policy, 0.5).action, 'fail');
  assert.equal(decideClaim(reply('busy'), 1, policy, 0.5).action, 'fail');
});

test('renewal: transient failures are tried again, any refusal loses the lease', () => {
  assert.equal(decideRenewal(reply('renewed')), 'renewed');
  assert.equal(decideRenewal({ kind: 'not_sent' }), 'try_again');
  assert.equal(decideRenewal({ kind: 'reply_lost' }), 'try_again');
  assert.equal(decideRenewal(reply('authority_unavailable')), 'try_again');
  assert.equal(decideRenewal(reply(null)), 'try_again');
  for (const code of ['stale_owner', 'expired_owner', 'authority_generation_mismatch', 'unauthenticated', 'forbidden']) {
    assert.equal(decideRenewal(reply(code)), 'lost', code);
  }
});

test('Retry-After: delta-seconds and HTTP dates', () => {
  assert.equal(parseRetryAfter('1', 0), 1_000);
  assert.equal(parseRetryAfter(' 30 ', 0), 30_000);
  assert.equal(parseRetryAfter(null, 0), null);
  assert.equal(parseRetryAfter('soon', 0), null);
  const now = Date.parse('2026-12-01T12:00:00Z');
  assert.equal(parseRetryAfter('Tue, 01 Dec 2026 12:00:05 GMT', now), 5_000);
  assert.equal(parseRetryAfter('Tue, 01 Dec 2026 11:00:00 GMT', now), 0);
});
