// The MCP server: the configured tools, listed with their schemas (plus the optional intent_id)
// and called through the gateway with the operation identity of identity.ts.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { argumentProblems } from './arguments.js';
import type { Config, ToolConfig } from './config.js';
import { operationId } from './identity.js';
import { fromError, fromResult, type ToolOutcome } from './outcome.js';
import type { Ownership } from './ownership.js';
import { fillBody, fillPath } from './template.js';

const INTENT_ID = {
  type: 'string',
  description:
    'Optional. Leave it out to make a retried or re-issued call of the same action safe: the same arguments are the same action and are done at most once. ' +
    'Give a new value only when the user deliberately wants the same action done again (e.g. a second identical booking).',
};

/** The tool as listed: the config's schema with intent_id added. */
export function listedTool(tool: ToolConfig): { name: string; description: string; inputSchema: Record<string, unknown> } {
  const schema = tool.inputSchema as { properties?: Record<string, unknown> };
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: { ...tool.inputSchema, type: 'object', properties: { ...schema.properties, intent_id: INTENT_ID } },
  };
}

function toolResult(outcome: ToolOutcome): CallToolResult {
  const failed = outcome.effect === 'rejected_by_provider' || outcome.effect === 'not_executed' || outcome.effect === 'unknown_held';
  return {
    content: [{ type: 'text', text: JSON.stringify(outcome) }],
    structuredContent: outcome as unknown as Record<string, unknown>,
    isError: failed,
  };
}

export function createServer(config: Config, ownership: Ownership): Server {
  const server = new Server({ name: 'write-gateway-mcp', version: '0.1.0' }, { capabilities: { tools: {} } });
  const byName = new Map(config.tools.map((t) => [t.name, t]));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: config.tools.map(listedTool) }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) {
      return { content: [{ type: 'text', text: `no tool named ${request.params.name}` }], isError: true };
    }
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const problems = argumentProblems(args, listedTool(tool).inputSchema);
    if (problems.length > 0) {
      return { content: [{ type: 'text', text: `bad arguments, nothing was done: ${problems.join('; ')}` }], isError: true };
    }
    const id = operationId(tool.name, args);
    try {
      const result = await ownership.mutate({
        provider: tool.provider,
        method: tool.method,
        path: fillPath(tool.path, args),
        body: tool.body === undefined ? undefined : (fillBody(tool.body, args) as Record<string, unknown>),
        operationId: id,
      });
      return toolResult(fromResult(id, result));
    } catch (error) {
      return toolResult(fromError(id, error));
    }
  });
  return server;
}
