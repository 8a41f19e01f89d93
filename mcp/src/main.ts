#!/usr/bin/env node
// write-gateway-mcp --config FILE [--http PORT]: the MCP server on stdio (default) or on
// Streamable HTTP at http://127.0.0.1:PORT/mcp (stateless: each request its own transport,
// one task handle for all; only for clients with the bearer token in MCP_HTTP_TOKEN, see
// http_guard.ts). Stops (releasing a task it claimed) on SIGINT/SIGTERM or stdin's end.

import { createServer as createHttpServer } from 'node:http';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { loadConfig } from './config.js';
import { checkHttpRequest, httpToken, parsePort } from './http_guard.js';
import { Ownership } from './ownership.js';
import { createServer } from './server.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const file = arg('--config');
if (file === undefined) {
  console.error('usage: write-gateway-mcp --config FILE [--http PORT]');
  process.exit(2);
}
let config;
try {
  config = loadConfig(file);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const ownership = new Ownership(config);
const stop = async () => {
  await ownership.close().catch(() => undefined);
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

const httpPort = arg('--http');
if (httpPort === undefined) {
  const server = createServer(config, ownership);
  server.onclose = stop;
  await server.connect(new StdioServerTransport());
} else {
  const port = parsePort(httpPort);
  const secret = httpToken(process.env);
  if (port === undefined) {
    console.error(`--http: not a port: ${httpPort}`);
    process.exit(2);
  }
  if ('error' in secret) {
    console.error(secret.error);
    process.exit(2);
  }
  let listeningOn = port;
  const http = createHttpServer(async (req, res) => {
    const verdict = checkHttpRequest(
      { url: req.url, host: req.headers.host, origin: req.headers.origin, authorization: req.headers.authorization },
      listeningOn,
      secret.token,
    );
    if (!verdict.ok) {
      const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
      if (verdict.status === 401) headers['www-authenticate'] = 'Bearer';
      res.writeHead(verdict.status, headers).end(`${verdict.reason}\n`);
      return;
    }
    const server = createServer(config, ownership);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  // --http 0 takes a free port: the line below names the one it got.
  http.listen(port, '127.0.0.1', () => {
    const address = http.address();
    if (typeof address === 'object' && address !== null) listeningOn = address.port;
    console.error(`write-gateway-mcp listening on http://127.0.0.1:${listeningOn}/mcp`);
  });
}
