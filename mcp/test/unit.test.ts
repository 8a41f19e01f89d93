// The pure parts: operation identity, templates, argument checks, config errors, the HTTP
// transport's request check.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { argumentProblems } from '../src/arguments.js';
import { parseConfig } from '../src/config.js';
import { checkHttpRequest, httpToken, parsePort, type HttpRequestHead } from '../src/http_guard.js';
import { canonicalJson, operationId } from '../src/identity.js';
import { fillBody, fillPath } from '../src/template.js';

test('the same intent has the same id whatever the key order; intent_id or a changed argument makes another', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: null } }), '{"a":{"c":null,"d":[1,{"e":3,"f":2}]},"b":1}');
  const a = operationId('book_slot', { slot: 's', customer: 'c' });
  assert.equal(a, operationId('book_slot', { customer: 'c', slot: 's' }));
  assert.match(a, /^mcp-[0-9a-f]{40}$/);
  assert.notEqual(a, operationId('book_slot', { slot: 's', customer: 'c', intent_id: '2' }));
  assert.notEqual(a, operationId('book_slot', { slot: 's', customer: 'd' }));
  assert.notEqual(a, operationId('cancel_slot', { slot: 's', customer: 'c' }));
});

test('templates: whole placeholders keep their JSON type, inner ones are text, path segments are encoded', () => {
  assert.deepEqual(fillBody({ n: '{{n}}', s: 'for {{who}}', opt: '{{missing}}', list: ['{{n}}'] }, { n: 3, who: 'ada' }), { n: 3, s: 'for ada', list: [3] });
  assert.equal(fillPath('/bookings/{id}/cancel', { id: 'a/b c' }), '/bookings/a%2Fb%20c/cancel');
  assert.throws(() => fillPath('/bookings/{id}', {}));
});

test('arguments are checked against the schema before anything is done', () => {
  const schema = { type: 'object', properties: { slot: { type: 'string' }, n: { type: 'integer' }, k: { enum: ['a', 'b'] } }, required: ['slot'], additionalProperties: false };
  assert.deepEqual(argumentProblems({ slot: 'x', n: 2, k: 'a' }, schema), []);
  assert.deepEqual(argumentProblems({}, schema), ['arguments.slot is required']);
  assert.deepEqual(argumentProblems({ slot: 1 }, schema), ['arguments.slot must be string, not integer']);
  assert.deepEqual(argumentProblems({ slot: 'x', extra: 1 }, schema), ['arguments.extra is not an argument of this tool']);
  assert.deepEqual(argumentProblems({ slot: 'x', k: 'z' }, schema), ['arguments.k must be one of ["a","b"]']);
});

test('a bad config names the field', () => {
  const ok = { gateway: { base_url: 'http://x', token_env: 'T' }, task: { tenant: 't', task: 'k', owner: 'o', lease_ms: 1000 }, tools: [{ name: 'a', description: 'd', input_schema: { type: 'object' }, provider: 'p', method: 'POST', path: '/x' }] };
  assert.equal(parseConfig(JSON.stringify(ok), { T: 'tok' }).tools[0]!.name, 'a');
  assert.throws(() => parseConfig(JSON.stringify(ok), {}), /\$\.gateway\.token_env: names T, which is not set/);
  const dup = { ...ok, tools: [ok.tools[0], ok.tools[0]] };
  assert.throws(() => parseConfig(JSON.stringify(dup), { T: 'tok' }), /\$\.tools\[1\]\.name: a is given twice/);
  const reserved = { ...ok, tools: [{ ...ok.tools[0], input_schema: { type: 'object', properties: { intent_id: {} } } }] };
  assert.throws(() => parseConfig(JSON.stringify(reserved), { T: 'tok' }), /intent_id/);
  const grant = { ...ok, task: { tenant: 't', task: 'k', grant_token_env: 'G' } };
  assert.equal(parseConfig(JSON.stringify(grant), { T: 'tok', G: 'g' }).ownership.kind, 'grant');
});

test('the example config of docs/mcp.md loads, its templates fill from valid arguments', () => {
  const text = readFileSync(new URL('../../../example.json', import.meta.url), 'utf8');
  const config = parseConfig(text, { GATEWAY_AGENT_TOKEN: 'dev-agent-token-a' });
  assert.deepEqual(config.tools.map((t) => t.name), ['book_slot', 'cancel_booking', 'update_contact']);
  assert.equal(config.ownership.kind, 'claim');
  const contact = config.tools[2]!;
  assert.deepEqual(argumentProblems({ contact_id: 'c 1', name: 'Ada' }, contact.inputSchema), []);
  assert.equal(fillPath(contact.path, { contact_id: 'c 1' }), '/contacts/c%201');
  assert.deepEqual(fillBody(contact.body, { name: 'Ada' }), { name: 'Ada' }, 'an optional argument left out is left out');
});

test('the HTTP transport answers only its own loopback name, its own origin and its bearer token', () => {
  const token = 'http-token-0123456789';
  const good: HttpRequestHead = { url: '/mcp', host: '127.0.0.1:4100', origin: undefined, authorization: `Bearer ${token}` };
  assert.deepEqual(checkHttpRequest(good, 4100, token), { ok: true });
  assert.deepEqual(checkHttpRequest({ ...good, host: 'LOCALHOST:4100', origin: 'http://localhost:4100' }, 4100, token), { ok: true });
  const refused = (head: Partial<HttpRequestHead>) => checkHttpRequest({ ...good, ...head }, 4100, token);
  assert.equal((refused({ url: '/other' }) as { status: number }).status, 404);
  assert.equal((refused({ url: '/mcp?x=1' }) as { status: number }).status, 404);
  // DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own Host.
  assert.equal((refused({ host: 'evil.example:4100' }) as { status: number }).status, 403);
  assert.equal((refused({ host: '127.0.0.1:4101' }) as { status: number }).status, 403);
  assert.equal((refused({ host: undefined }) as { status: number }).status, 403);
  assert.equal((refused({ origin: 'http://evil.example' }) as { status: number }).status, 403);
  assert.equal((refused({ origin: 'null' }) as { status: number }).status, 403);
  for (const authorization of [undefined, '', 'Bearer', `Bearer ${token}x`, `bearer ${token}`, `Basic ${token}`, `Bearer ${token} `]) {
    assert.equal((refused({ authorization }) as { status: number }).status, 401, String(authorization));
  }
});

test('the HTTP transport needs a port and a token of at least 16 printable characters', () => {
  assert.equal(parsePort('0'), 0);
  assert.equal(parsePort('65535'), 65535);
  for (const bad of ['', '-1', '65536', '80x', ' 80', '1e3', '0x50']) assert.equal(parsePort(bad), undefined, bad);
  assert.deepEqual(httpToken({ MCP_HTTP_TOKEN: 'abcdefghijklmnop' }), { token: 'abcdefghijklmnop' });
  assert.deepEqual(httpToken({ MCP_HTTP_TOKEN_ENV: 'MY_TOKEN', MY_TOKEN: 'abcdefghijklmnopq' }), { token: 'abcdefghijklmnopq' });
  assert.match((httpToken({}) as { error: string }).error, /MCP_HTTP_TOKEN/);
  assert.match((httpToken({ MCP_HTTP_TOKEN: 'short' }) as { error: string }).error, /at least 16/);
  assert.match((httpToken({ MCP_HTTP_TOKEN: 'has a space in it ok' }) as { error: string }).error, /at least 16/);
});
