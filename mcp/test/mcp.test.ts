// The MCP server with the SDK's own client against the real gateway, PostgreSQL and demo
// provider: tools/list is the config; a call whose reply is lost and that is re-issued is done
// once; a deliberate second action (new intent_id) is done again; a server paused past its lease
// sends nothing; a call while the authority is down fails without an effect.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn, spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { admin, authority, booking, eventually } from '../../clients/typescript/test/support.js';
import { Gateway } from 'write-gateway-client';
import { BOOK_TOOL, MAIN, connect, fresh, outcomeOf, writeConfig } from './support.js';

// A POST with exactly these headers (node:http lets a test set Host, which fetch does not).
function rawPost(url: URL, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, setHost: !('host' in headers) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('tools/list matches the config (plus the optional intent_id), over stdio and over Streamable HTTP for its token holders only', async () => {
  const config = writeConfig(fresh('mcp-list'));
  const { client } = await connect(config);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), [BOOK_TOOL.name]);
    assert.equal(tools[0]!.description, BOOK_TOOL.description);
    const { intent_id, ...props } = tools[0]!.inputSchema.properties as Record<string, unknown>;
    assert.deepEqual(props, BOOK_TOOL.input_schema.properties);
    assert.equal((intent_id as { type: string }).type, 'string');
    assert.deepEqual(tools[0]!.inputSchema.required, BOOK_TOOL.input_schema.required);
  } finally {
    await client.close();
  }

  // Without its bearer token the HTTP transport does not start.
  const untokened = spawnSync(process.execPath, [MAIN, '--config', config, '--http', '0'], {
    env: { ...process.env, MCP_TEST_AGENT_TOKEN: 'dev-agent-token-a', MCP_HTTP_TOKEN: '' },
    encoding: 'utf8',
  });
  assert.equal(untokened.status, 2);
  assert.match(untokened.stderr, /MCP_HTTP_TOKEN/);

  const httpToken = 'mcp-http-test-token-0123456789';
  const child = spawn(process.execPath, [MAIN, '--config', config, '--http', '0'], {
    env: { ...process.env, MCP_TEST_AGENT_TOKEN: 'dev-agent-token-a', MCP_HTTP_TOKEN: httpToken },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let said = '';
      child.stderr.on('data', (d: Buffer) => {
        said += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(said);
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error(`the HTTP server exited: ${said}`)));
    });
    // Refused before MCP sees it: no token, a wrong token, another Host (DNS rebinding), another Origin.
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const target = new URL(url);
    const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const refusals: [Record<string, string>, number][] = [
      [{}, 401],
      [{ authorization: 'Bearer not-the-token-at-all' }, 401],
      [{ authorization: `Bearer ${httpToken}`, host: `evil.example:${target.port}` }, 403],
      [{ authorization: `Bearer ${httpToken}`, origin: 'http://evil.example' }, 403],
    ];
    for (const [headers, status] of refusals) {
      const reply = await rawPost(target, { ...mcpHeaders, ...headers }, list);
      assert.equal(reply.status, status, JSON.stringify(headers));
      assert.doesNotMatch(reply.body, /book_slot/);
    }
    const http = new Client({ name: 'mcp-tests-http', version: '0.0.0' });
    await http.connect(new StreamableHTTPClientTransport(target, { requestInit: { headers: { authorization: `Bearer ${httpToken}` } } }));
    const { tools } = await http.listTools();
    assert.deepEqual(tools.map((t) => t.name), [BOOK_TOOL.name]);
    await http.close();
  } finally {
    child.kill('SIGTERM');
  }
});

test('a call whose reply is lost, re-issued, is done once; a new intent_id is a second action', async () => {
  const task = fresh('mcp-lost');
  const { client } = await connect(writeConfig(task));
  try {
    const args = { slot: fresh('slot'), customer: 'ada' };
    // The provider takes 2.5 s; the host gives up on the reply after 0.5 s.
    await booking.fault({ mode: 'delay', delay_ms: 2500, count: 1 });
    await assert.rejects(client.callTool({ name: 'book_slot', arguments: args }, undefined, { timeout: 500 }));
    // The model re-issues the same call.
    const again = outcomeOf(await client.callTool({ name: 'book_slot', arguments: args }, undefined, { timeout: 60_000 }));
    assert.equal(again.effect, 'replayed', JSON.stringify(again));
    assert.equal(again.committed_version, 1);
    const key = await admin.upstreamKey('tenant-a', task, again.operation_id);
    assert.equal(await booking.effectsFor(key), 1);
    assert.equal((await booking.requestsContaining(args.slot)).length, 1);

    // The same arguments on purpose a second time, told apart by intent_id.
    const second = outcomeOf(await client.callTool({ name: 'book_slot', arguments: { ...args, intent_id: 'second-booking' } }));
    assert.equal(second.effect, 'rejected_by_provider', 'the demo provider refuses a taken slot: a second real request');
    assert.notEqual(second.operation_id, again.operation_id);
    assert.equal((await booking.requestsContaining(args.slot)).length, 2);
    const other = outcomeOf(await client.callTool({ name: 'book_slot', arguments: { slot: fresh('slot'), customer: 'ada' } }));
    assert.equal(other.effect, 'committed');
    assert.equal(other.committed_version, 2);
  } finally {
    await client.close();
  }
});

test('a server paused past its lease sends nothing after it resumes', async () => {
  const task = fresh('mcp-paused');
  const { client, transport } = await connect(writeConfig(task, { leaseMs: 2_000 }));
  try {
    const first = outcomeOf(await client.callTool({ name: 'book_slot', arguments: { slot: fresh('slot'), customer: 'bo' } }));
    assert.equal(first.effect, 'committed');
    process.kill(transport.pid!, 'SIGSTOP');
    await eventually('the server\'s lease has expired', async () => (await admin.taskView('tenant-a', task)).expired === true);
    const other = new Gateway({ baseUrl: process.env['GATEWAY_URL']!, token: 'dev-agent-token-a' });
    await using successor = await other.claim({ tenant: 'tenant-a', task, owner: 'successor', leaseMs: 60_000 });
    process.kill(transport.pid!, 'SIGCONT');
    const slot = fresh('slot');
    const after = outcomeOf(await client.callTool({ name: 'book_slot', arguments: { slot, customer: 'bo' } }));
    assert.equal(after.effect, 'not_executed', JSON.stringify(after));
    assert.equal(after.code, 'lease_lost');
    assert.match(after.tell_user, /not sent/);
    assert.equal((await booking.requestsContaining(slot)).length, 0, 'the provider saw nothing');
    assert.deepEqual(await admin.rejections('tenant-a', task), [], 'nothing reached the gateway either');
    // The next call claims again, and the successor holds the task: busy, still nothing sent.
    const next = outcomeOf(await client.callTool({ name: 'book_slot', arguments: { slot, customer: 'bo' } }));
    assert.equal(next.code, 'busy');
    assert.equal((await booking.requestsContaining(slot)).length, 0);
    assert.equal(successor.version, 1);
  } finally {
    try { process.kill(transport.pid!, 'SIGCONT'); } catch { /* gone */ }
    await client.close();
  }
});

test('a grant passed by the host and since taken over is refused stale_owner at the gateway; nothing reaches the provider', async () => {
  const task = fresh('mcp-host-grant');
  const host = new Gateway({ baseUrl: process.env['GATEWAY_URL']!, token: 'dev-agent-token-a' });
  const hostTask = await host.claim({ tenant: 'tenant-a', task, owner: 'host', leaseMs: 60_000 });
  const config = writeConfig(task, { task: { tenant: 'tenant-a', task, grant_token_env: 'MCP_TEST_GRANT' } });
  const { client } = await connect(config, { MCP_TEST_GRANT: hostTask.grantToken });
  try {
    const first = outcomeOf(await client.callTool({ name: 'book_slot', arguments: { slot: fresh('slot'), customer: 'di' } }));
    assert.equal(first.effect, 'committed', JSON.stringify(first));
    // The host's lease ends and another owner claims: the grant the server holds is superseded,
    // and the server has no clock of its own to know it.
    await hostTask.release();
    await using successor = await host.claim({ tenant: 'tenant-a', task, owner: 'successor', leaseMs: 60_000 });
    const slot = fresh('slot');
    const stale = outcomeOf(await client.callTool({ name: 'book_slot', arguments: { slot, customer: 'di' } }));
    assert.equal(stale.effect, 'not_executed', JSON.stringify(stale));
    assert.equal(stale.code, 'stale_owner');
    assert.match(stale.tell_user, /no longer held the task/);
    assert.equal((await booking.requestsContaining(slot)).length, 0, 'the provider saw nothing');
    const rejected = await admin.rejections('tenant-a', task);
    assert.equal(rejected.length, 1, JSON.stringify(rejected));
    assert.equal(successor.version, 1, 'the successor sees only the first booking');
  } finally {
    await client.close();
  }
});

test('a tool call while the authority is down fails without an effect', async () => {
  const task = fresh('mcp-authority');
  const { client } = await connect(writeConfig(task, { gateway: { max_attempts: 2 } }));
  try {
    // Claimed while the authority is up.
    const warm = outcomeOf(await client.callTool({ name: 'book_slot', arguments: { slot: fresh('slot'), customer: 'cy' } }));
    assert.equal(warm.effect, 'committed');
    const slot = fresh('slot');
    await authority.stop();
    try {
      const down = outcomeOf(await client.callTool({ name: 'book_slot', arguments: { slot, customer: 'cy' } }));
      assert.equal(down.effect, 'not_executed', JSON.stringify(down));
      assert.equal(down.code, 'authority_unavailable');
    } finally {
      await authority.start();
    }
    await eventually('the gateway is ready again', () => admin.ready());
    assert.equal((await booking.requestsContaining(slot)).length, 0);
  } finally {
    await client.close();
  }
});
