// The server's config file (docs/mcp.md, "Config"), read and checked at start: a bad field
// stops the server with its JSON path.

import { readFileSync } from 'node:fs';

export interface ToolConfig {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  provider: string;
  method: string;
  path: string;
  body: unknown;
}

export type Ownership =
  | { kind: 'claim'; tenant: string; task: string; owner: string; leaseMs: number }
  | { kind: 'grant'; tenant: string; task: string; grantToken: string };

export interface Config {
  baseUrl: string;
  token: string;
  timeoutMs: number;
  outcomeWaitMs: number;
  maxAttempts: number;
  ownership: Ownership;
  tools: ToolConfig[];
}

class ConfigError extends Error {}

function need<T>(ok: boolean, path: string, what: string, value: T): T {
  if (!ok) throw new ConfigError(`${path}: ${what}`);
  return value;
}
const str = (o: Record<string, unknown>, k: string, p: string): string =>
  need(typeof o[k] === 'string' && (o[k] as string).length > 0, `${p}.${k}`, 'must be a non-empty string', o[k] as string);
const int = (o: Record<string, unknown>, k: string, p: string, dflt: number): number =>
  o[k] === undefined ? dflt : need(Number.isSafeInteger(o[k]) && (o[k] as number) >= 0, `${p}.${k}`, 'must be an integer >= 0', o[k] as number);
const obj = (v: unknown, p: string): Record<string, unknown> =>
  need(typeof v === 'object' && v !== null && !Array.isArray(v), p, 'must be an object', v as Record<string, unknown>);
const envValue = (o: Record<string, unknown>, k: string, p: string, env: NodeJS.ProcessEnv): string => {
  const name = str(o, k, p);
  return need(typeof env[name] === 'string' && env[name] !== '', `${p}.${k}`, `names ${name}, which is not set`, env[name] as string);
};

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env): Config {
  const root = obj(JSON.parse(text), '$');
  const gw = obj(root['gateway'], '$.gateway');
  const task = obj(root['task'], '$.task');
  const ownership: Ownership =
    task['grant_token_env'] !== undefined
      ? { kind: 'grant', tenant: str(task, 'tenant', '$.task'), task: str(task, 'task', '$.task'), grantToken: envValue(task, 'grant_token_env', '$.task', env) }
      : {
          kind: 'claim',
          tenant: str(task, 'tenant', '$.task'),
          task: str(task, 'task', '$.task'),
          owner: str(task, 'owner', '$.task'),
          leaseMs: need(Number.isSafeInteger(task['lease_ms']) && (task['lease_ms'] as number) > 0, '$.task.lease_ms', 'must be an integer > 0', task['lease_ms'] as number),
        };
  const list = need(Array.isArray(root['tools']) && (root['tools'] as unknown[]).length > 0, '$.tools', 'must be a non-empty array', root['tools'] as unknown[]);
  const names = new Set<string>();
  const tools = list.map((raw, i): ToolConfig => {
    const p = `$.tools[${i}]`;
    const t = obj(raw, p);
    const name = need(typeof t['name'] === 'string' && TOOL_NAME.test(t['name']), `${p}.name`, 'must be 1-64 of A-Z a-z 0-9 _ -', t['name'] as string);
    need(!names.has(name), `${p}.name`, `${name} is given twice`, null);
    names.add(name);
    const schema = obj(t['input_schema'], `${p}.input_schema`);
    need(schema['type'] === 'object', `${p}.input_schema.type`, 'must be "object"', null);
    const props = schema['properties'] as Record<string, unknown> | undefined;
    need(props === undefined || !('intent_id' in props), `${p}.input_schema.properties.intent_id`, 'is reserved (the server adds it)', null);
    const path = str(t, 'path', p);
    need(path.startsWith('/'), `${p}.path`, 'must start with "/"', null);
    return { name, description: str(t, 'description', p), inputSchema: schema, provider: str(t, 'provider', p), method: str(t, 'method', p), path, body: t['body'] };
  });
  return {
    baseUrl: str(gw, 'base_url', '$.gateway'),
    token: envValue(gw, 'token_env', '$.gateway', env),
    timeoutMs: int(gw, 'timeout_ms', '$.gateway', 30_000),
    outcomeWaitMs: int(gw, 'outcome_wait_ms', '$.gateway', 20_000),
    maxAttempts: Math.max(1, int(gw, 'max_attempts', '$.gateway', 6)),
    ownership,
    tools,
  };
}

export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return parseConfig(readFileSync(file, 'utf8'), env);
  } catch (error) {
    throw new Error(`config error: ${file}: ${(error as Error).message}`);
  }
}
