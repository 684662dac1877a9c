// One MCP server's life: started when first needed, over stdio in the computer or Streamable
// HTTP through the proxy; started again after it ends on its own, after a pause that doubles with
// each failure in a row (1 s up to 5 min); stopped when its entry changes or the stack closes.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerInfo } from '../../protocol/mcp.ts';
import type { ComputerStdioTransport, ServiceRunner } from './computer-transport.ts';
import { isStdio, missingValues, type McpServerConfig } from './config.ts';

type Sdk = typeof import('./sdk.ts');

/** How long a server may take to start and answer `initialize` and `tools/list`. */
export const START_TIMEOUT_MS = 120_000;
const FIRST_RETRY_MS = 1_000;
const LONGEST_RETRY_MS = 5 * 60_000;

export interface Server {
  name: string;
  config: McpServerConfig;
  state: McpServerInfo['state'];
  error: string | null;
  retryAt: number | null;
  retryTimer: ReturnType<typeof setTimeout> | null;
  failures: number;
  starts: number;
  tools: Tool[];
  client: Client | null;
  transport: Transport | null;
  connecting: Promise<void> | null;
  /** Bumped at each start and stop: a late event of an older process changes nothing. */
  generation: number;
}

/** What a server's life needs from the stack's MCP servers. */
export interface ServerContext {
  /** The computer, for stdio servers; null: this stack has none. */
  computer: ServiceRunner | null;
  /** A fetch that reaches a remote server through the proxy; or why it cannot. */
  remote(url: string, headers: Record<string, string>): { fetch: FetchLike; url: URL } | { refused: string };
  now(): number;
  /** The pause after the first failure (doubling after each); 1 s when absent. */
  firstRetryMs?: number;
  /** Tells the page the servers changed. */
  changed(): void;
  /** Whether `server` is still the stack's server of its name (a saved file may have replaced it). */
  current(server: Server): boolean;
}

export function makeServer(name: string, config: McpServerConfig): Server {
  return {
    name,
    config,
    state: 'off',
    error: null,
    retryAt: null,
    retryTimer: null,
    failures: 0,
    starts: 0,
    tools: [],
    client: null,
    transport: null,
    connecting: null,
    generation: 0,
  };
}

function transportFor(ctx: ServerContext, sdk: Sdk, server: Server): Transport {
  const config = server.config;
  if (isStdio(config)) {
    if (!ctx.computer) throw new Error('this stack has no computer to run it in');
    // An earlier process of this server (from before a reload: the computer woke with it
    // running) is ended first, so two never answer at once.
    const script = 'for f in $(grep -lzx "STACKDOCS_MCP=$STACKDOCS_MCP" /proc/[0-9]*/environ 2>/dev/null); do p=${f#/proc/}; p=${p%/environ}; [ "$p" != $$ ] && kill -9 "$p" 2>/dev/null; done; exec "$@"';
    return new sdk.ComputerStdioTransport(ctx.computer, {
      argv: ['/bin/bash', '-c', script, `mcp-${server.name}`, config.command, ...(config.args ?? [])],
      cwd: config.cwd ?? '/workspace',
      env: { ...config.env, STACKDOCS_MCP: server.name },
    });
  }
  const reach = ctx.remote(config.url, config.headers ?? {});
  if ('refused' in reach) throw new Error(reach.refused);
  return new sdk.StreamableHTTPClientTransport(reach.url, { fetch: reach.fetch });
}

/** Starts the server unless it is ready or turned off; while it is starting, that start. Never rejects. */
export function connect(ctx: ServerContext, server: Server): Promise<void> {
  if (server.state === 'ready' || server.config.disabled) return Promise.resolve();
  if (server.connecting) return server.connecting;
  // Started with a placeholder for its key, it would fail in a way that names nothing.
  const missing = missingValues(server.config);
  if (missing.length) {
    server.state = 'failed';
    server.error = `${server.name}: it needs a value for ${missing.join(', ')}, left out when the stack was exported; fill ${missing.length === 1 ? 'it' : 'them'} in here`;
    server.retryAt = null;
    ctx.changed();
    return Promise.resolve();
  }
  if (server.retryTimer) clearTimeout(server.retryTimer);
  server.retryTimer = null;
  const generation = ++server.generation;
  server.state = 'starting';
  server.error = null;
  server.retryAt = null;
  server.starts++;
  ctx.changed();
  const attempt = (async () => {
    let transport: Transport | null = null;
    let client: Client | null = null;
    let sdk: Sdk | null = null;
    try {
      sdk = await import('./sdk.ts');
      if (server.generation !== generation) return; // stopped while the SDK loaded
      const stdio = sdk.ComputerStdioTransport;
      client = new sdk.Client({ name: 'stackdocs', version: '1.0.0' }, { jsonSchemaValidator: new sdk.CfWorkerJsonSchemaValidator() });
      transport = transportFor(ctx, sdk, server);
      const opened = transport;
      // What a server says that is not an answer (a stray line on stdout): kept in the console.
      client.onerror = (error) => console.warn(`MCP server ${server.name}: ${error.message}`);
      client.onclose = () => {
        // While starting, the failed start says it (connect rejects).
        if (server.generation !== generation || server.state !== 'ready') return;
        failed(ctx, server, `it stopped: ${opened instanceof stdio ? ended(opened) : 'the connection closed'}`);
      };
      await client.connect(transport, { timeout: START_TIMEOUT_MS });
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: START_TIMEOUT_MS });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor && tools.length < 1000);
      if (server.generation !== generation) return void (await client.close().catch(() => {}));
      server.client = client;
      server.transport = transport;
      server.tools = tools;
      server.state = 'ready';
      server.failures = 0;
      ctx.changed();
    } catch (error) {
      if (server.generation !== generation) return;
      const said = sdk && transport instanceof sdk.ComputerStdioTransport ? ended(transport) : '';
      failed(ctx, server, `it could not start: ${messageOf(error)}${said ? ` (${said})` : ''}`);
      await client?.close().catch(() => {});
    }
  })().finally(() => {
    if (server.generation === generation) server.connecting = null;
  });
  server.connecting = attempt;
  return attempt;
}

/** A server that ended or could not start: said, then tried again after a pause. */
function failed(ctx: ServerContext, server: Server, reason: string): void {
  server.generation++;
  const client = server.client;
  server.client = null;
  server.transport = null;
  server.connecting = null;
  void client?.close().catch(() => {});
  server.failures++;
  const pause = Math.min(LONGEST_RETRY_MS, (ctx.firstRetryMs ?? FIRST_RETRY_MS) * 2 ** (server.failures - 1));
  server.state = 'failed';
  server.error = `${server.name}: ${reason}`;
  server.retryAt = ctx.now() + pause;
  if (server.retryTimer) clearTimeout(server.retryTimer);
  server.retryTimer = setTimeout(() => {
    server.retryTimer = null;
    if (ctx.current(server) && !server.config.disabled) void connect(ctx, server);
  }, pause);
  ctx.changed();
}

/** Stops the server and any retry due; a late event of its process changes nothing. */
export async function stop(server: Server): Promise<void> {
  server.generation++;
  if (server.retryTimer) clearTimeout(server.retryTimer);
  server.retryTimer = null;
  const client = server.client;
  server.client = null;
  server.transport = null;
  server.connecting = null;
  server.state = 'off';
  await client?.close().catch(() => {});
}

/** A ready client for a call: waits for a start under way or due within the call's time. */
export async function ready(ctx: ServerContext, server: Server, deadline: number, signal: AbortSignal): Promise<Client> {
  while (!signal.aborted && ctx.now() < deadline) {
    if (server.state === 'ready' && server.client) return server.client;
    if (server.config.disabled) throw new Error(`the MCP server "${server.name}" is turned off in Settings`);
    if (server.state === 'failed' && server.retryAt !== null && server.retryAt > deadline) break;
    if (server.state === 'failed' && server.retryAt !== null && server.retryAt > ctx.now()) {
      await sleep(Math.min(server.retryAt - ctx.now(), deadline - ctx.now()), signal);
      continue;
    }
    await Promise.race([connect(ctx, server), sleep(deadline - ctx.now(), signal)]);
  }
  if (signal.aborted) throw new Error('the call was cancelled');
  throw new Error(`the MCP server "${server.name}" is not running${server.error ? ` (${server.error})` : ''}`);
}

function ended(transport: ComputerStdioTransport): string {
  const stderr = transport.stderr.split('\n').slice(-3).join(' | ');
  return [transport.ending, stderr && `it said: ${stderr}`].filter(Boolean).join('; ');
}

/** An error's message without the SDK's "MCP error -32000: " before it. */
export function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^MCP error -?\d+: /, '');
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
