// Starting the MCP server as the SDK's own client does (stdio), with a config written per test.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

export function fresh(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

export const BOOK_TOOL = {
  name: 'book_slot',
  description: 'Book a slot for a customer at the booking provider.',
  input_schema: {
    type: 'object',
    properties: { slot: { type: 'string', description: 'the slot, e.g. "2026-12-01 09:00"' }, customer: { type: 'string' } },
    required: ['slot', 'customer'],
    additionalProperties: false,
  },
  provider: 'booking',
  method: 'POST',
  path: '/bookings',
  body: { slot: '{{slot}}', customer: '{{customer}}' },
};

export function writeConfig(task: string, extra: { leaseMs?: number; gateway?: Record<string, unknown>; task?: Record<string, unknown> } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-test-'));
  const file = join(dir, 'mcp.json');
  writeFileSync(
    file,
    JSON.stringify({
      gateway: { base_url: process.env['GATEWAY_URL'], token_env: 'MCP_TEST_AGENT_TOKEN', ...extra.gateway },
      task: extra.task ?? { tenant: 'tenant-a', task, owner: 'mcp-server', lease_ms: extra.leaseMs ?? 60_000 },
      tools: [BOOK_TOOL],
    }),
  );
  return file;
}

export async function connect(configFile: string, env: Record<string, string> = {}): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, '--config', configFile],
    env: { ...(process.env as Record<string, string>), MCP_TEST_AGENT_TOKEN: 'dev-agent-token-a', ...env },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'mcp-tests', version: '0.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** The tool result's structured outcome (outcome.ts). */
export function outcomeOf(result: unknown): any {
  const r = result as { structuredContent?: unknown; content: { text: string }[] };
  return r.structuredContent ?? JSON.parse(r.content[0]!.text);
}
