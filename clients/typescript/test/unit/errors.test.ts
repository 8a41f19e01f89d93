// One error class per refusal code of docs/api.md's "Codes" table, read from the document
// itself so a code added there without a class here fails this test.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { REFUSAL_CODES, errorForCode, GatewayError, UnexpectedReplyError, endsLease } from '../../src/errors.js';
import { OutcomeUnknownError } from '../../src/outcome_unknown.js';
import { RejectedByProviderError } from '../../src/errors.js';

const SUCCESS = new Set(['ok', 'granted', 'renewed', 'released', 'committed', 'historical_retry', 'resolved', 'revoked', 'realm_rotated']);

function documentedCodes(): string[] {
  const api = readFileSync(fileURLToPath(new URL('../../../../../docs/api.md', import.meta.url)), 'utf8');
  const section = api.slice(api.indexOf('\n## Codes'), api.indexOf('\n**Request headers too large.**'));
  const codes = new Set<string>();
  for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
    for (const m of line.matchAll(/`([a-z_]+)`/g)) codes.add(m[1]!);
  }
  return [...codes];
}

test('every refusal code of docs/api.md has its own class carrying that code', () => {
  const documented = documentedCodes();
  assert.ok(documented.length > 30, `read ${documented.length} codes from docs/api.md`);
  for (const code of documented) {
    if (SUCCESS.has(code)) continue;
    if (code === 'unknown_outcome') {
      assert.equal(OutcomeUnknownError.name, 'OutcomeUnknownError');
      continue;
    }
    if (code === 'rejected_by_provider') {
      assert.equal(new RejectedByProviderError('x').code, code);
      continue;
    }
    assert.ok(REFUSAL_CODES.includes(code), `no class for ${code}`);
    const error = errorForCode(code, { status: 409, problem: { code, detail: 'why' }, requestId: 'r-1' });
    assert.equal(error.code, code);
    assert.ok(error instanceof GatewayError);
    assert.notEqual(error.constructor, GatewayError);
    assert.equal(error.status, 409);
    assert.equal(error.requestId, 'r-1');
    assert.match(error.message, /why/);
  }
  const classes = new Set(REFUSAL_CODES.map((c) => errorForCode(c, {}).constructor));
  assert.equal(classes.size, REFUSAL_CODES.length, 'one class per code');
});

test('an unknown code is an UnexpectedReplyError; grant refusals end the lease', () => {
  assert.ok(errorForCode('no_such_code', { status: 418 }) instanceof UnexpectedReplyError);
  assert.equal(endsLease('stale_owner'), true);
  assert.equal(endsLease('expired_owner'), true);
  assert.equal(endsLease('authority_generation_mismatch'), true);
  assert.equal(endsLease('version_conflict'), false);
  assert.equal(endsLease('authority_unavailable'), false);
});
