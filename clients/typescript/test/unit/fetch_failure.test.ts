// Only a failure to connect proves nothing was sent; everything else may have reached the gateway.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failedBeforeSending } from '../../src/fetch_failure.js';

const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });
const coded = (code: string) => Object.assign(new Error(code), { code });

test('connect failures are "not sent"', () => {
  for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']) {
    assert.equal(failedBeforeSending(fetchFailed(coded(code))), true, code);
  }
  // Happy eyeballs: several addresses, every one refused.
  const all = Object.assign(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]), { code: 'ECONNREFUSED' });
  assert.equal(failedBeforeSending(fetchFailed(all)), true);
});

test('resets, timeouts, aborts and unknown failures may have been sent', () => {
  for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']) {
    assert.equal(failedBeforeSending(fetchFailed(coded(code))), false, code);
  }
  assert.equal(failedBeforeSending(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), false);
  assert.equal(failedBeforeSending(fetchFailed(new Error('other side closed'))), false);
  assert.equal(failedBeforeSending(fetchFailed(new AggregateError([coded('ECONNREFUSED'), coded('ECONNRESET')]))), false);
  assert.equal(failedBeforeSending(undefined), false);
});
