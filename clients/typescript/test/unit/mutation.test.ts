// Bad arguments are refused before anything is sent; bodies become the exact bytes sent.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Gateway } from '../../src/gateway.js';
import { InvalidArgumentError, pathSegment } from '../../src/labels.js';
import { prepareMutation } from '../../src/mutation.js';

const base = { provider: 'booking', method: 'post', path: '/bookings', operationId: 'op-1' };

test('an object body is JSON with its content type; the method is upper-cased', () => {
  const m = prepareMutation({ ...base, body: { slot: 'a' } });
  assert.equal(m.method, 'POST');
  assert.equal(new TextDecoder().decode(m.body), '{"slot":"a"}');
  assert.equal(m.contentType, 'application/json');
  assert.equal(prepareMutation({ ...base, body: 'raw', contentType: 'text/plain' }).contentType, 'text/plain');
  assert.equal(prepareMutation({ ...base }).body, undefined);
});

test('bad labels, paths and methods are refused locally', () => {
  assert.throws(() => prepareMutation({ ...base, operationId: '' }), InvalidArgumentError);
  assert.throws(() => prepareMutation({ ...base, operationId: 'has space' }), InvalidArgumentError);
  assert.throws(() => prepareMutation({ ...base, operationId: 'x'.repeat(81) }), InvalidArgumentError);
  assert.throws(() => prepareMutation({ ...base, path: 'bookings' }), InvalidArgumentError);
  assert.throws(() => prepareMutation({ ...base, path: '/a b' }), InvalidArgumentError);
  assert.throws(() => prepareMutation({ ...base, method: 'GET' }), InvalidArgumentError);
  assert.throws(() => prepareMutation({ ...base, method: 'PO ST' }), InvalidArgumentError);
  assert.throws(() => pathSegment('task', '..'), InvalidArgumentError);
  assert.equal(pathSegment('task', 'a/b?c'), 'a%2Fb%3Fc');
});

test('a gateway needs an http(s) base URL without credentials and a token', () => {
  assert.throws(() => new Gateway({ baseUrl: 'ftp://x', token: 't' }), InvalidArgumentError);
  assert.throws(() => new Gateway({ baseUrl: 'http://u:p@x', token: 't' }), InvalidArgumentError);
  assert.throws(() => new Gateway({ baseUrl: 'http://x', token: '' }), InvalidArgumentError);
  assert.equal(new Gateway({ baseUrl: 'http://127.0.0.1:8080/', token: 't' }).baseUrl, 'http://127.0.0.1:8080');
});
