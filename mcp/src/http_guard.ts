// Who may use the Streamable HTTP transport. It acts with the agent's token and the task's grant,
// so it is refused to anyone not holding its own bearer token, and to pages a browser loads from
// elsewhere: a Host that is not this loopback listener (DNS rebinding), or an Origin that is not it.

import { timingSafeEqual, createHash } from 'node:crypto';

export type HttpVerdict = { ok: true } | { ok: false; status: 401 | 403 | 404; reason: string };

export interface HttpRequestHead {
  url: string | undefined;
  host: string | undefined;
  origin: string | undefined;
  authorization: string | undefined;
}

// The names this listener answers to: loopback only, on its own port.
export function allowedHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

// Equal-time comparison of two secrets of any length (hashed first, so lengths do not leak).
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

export function checkHttpRequest(head: HttpRequestHead, port: number, token: string): HttpVerdict {
  if (head.url !== '/mcp') return { ok: false, status: 404, reason: 'the MCP endpoint is /mcp' };
  const hosts = allowedHosts(port);
  if (head.host === undefined || !hosts.includes(head.host.toLowerCase())) {
    return { ok: false, status: 403, reason: `Host must be one of ${hosts.join(', ')}` };
  }
  if (head.origin !== undefined && !hosts.some((h) => head.origin!.toLowerCase() === `http://${h}`)) {
    return { ok: false, status: 403, reason: 'requests from another origin are refused' };
  }
  const match = /^Bearer ([!-~]+)$/.exec(head.authorization ?? '');
  if (match === null || !sameSecret(match[1]!, token)) {
    return { ok: false, status: 401, reason: 'a valid bearer token is required' };
  }
  return { ok: true };
}

// The --http argument: a port number, 0 for any free one.
export function parsePort(text: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port <= 65535 ? port : undefined;
}

// The HTTP transport's token, from the environment variable MCP_HTTP_TOKEN_ENV names (default
// MCP_HTTP_TOKEN): required, and at least 16 printable characters, so a forgotten or trivial
// token stops the server at start instead of leaving it open.
export function httpToken(env: NodeJS.ProcessEnv): { token: string } | { error: string } {
  const name = env['MCP_HTTP_TOKEN_ENV'] ?? 'MCP_HTTP_TOKEN';
  const token = env[name];
  if (token === undefined || token === '') {
    return { error: `--http needs a bearer token for its clients in the environment variable ${name}` };
  }
  if (!/^[!-~]{16,}$/.test(token)) {
    return { error: `${name} must be at least 16 printable characters without spaces` };
  }
  return { token };
}
