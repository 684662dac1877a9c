// The stack's MCP servers, through the official SDK's client: a stdio server runs in the computer
// (its process started by the guest agent, its JSON-RPC relayed over the exec channel), a remote
// one is reached over Streamable HTTP through the proxy. Each server's tools reach the model as
// `mcp__<server>__<tool>` (server-tools.ts) and pass the permission gate like any tool (default: ask).
//
// A server starts when first needed (a mission, or Settings listing its tools) and runs while the
// stack is open. One that ends on its own (a crash, a kill) is started again after a pause that
// doubles with each failure in a row (1 s up to 5 min; server-runner.ts); a call waiting on it
// waits for that start within its own time limit. Every failure is said to the model and shown in
// Settings. This file keeps the stack's list of servers in step with its file.
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { AgentTool } from '../agent/types.ts';
import type { StackEventBody } from '../../protocol/events.ts';
import type { McpInfo, McpToolInfo } from '../../protocol/mcp.ts';
import type { StackStorage } from '../../storage/json-files.ts';
import type { ServiceRunner } from './computer-transport.ts';
import { describeTarget, isStdio, MCP_FILE, McpConfigError, parseMcpFile, qualifiedName, type McpFile } from './config.ts';
import { connect, makeServer, sleep, stop, type Server, type ServerContext } from './server-runner.ts';
import { toolFor } from './server-tools.ts';

export { START_TIMEOUT_MS } from './server-runner.ts';
export { describeResult } from './server-tools.ts';

export interface McpServersDeps {
  storage: StackStorage;
  emit(event: StackEventBody): void;
  /** The computer, for stdio servers; null: this stack has none. */
  computer: ServiceRunner | null;
  /**
   * A fetch that reaches the server at `url`, sending it `headers` (its own, e.g. an API key),
   * through the proxy (the device's credential, the owner's list of allowed hosts); or why it
   * cannot.
   */
  remote(url: string, headers: Record<string, string>): { fetch: FetchLike; url: URL } | { refused: string };
  now?: () => number;
  /** For tests: the pause after the first failure (doubling after each). */
  firstRetryMs?: number;
}

export interface McpServers {
  info(): McpInfo;
  /** Checks and stores the edited file; running servers whose entry changed or went are stopped. Throws McpConfigError. */
  save(text: string): Promise<McpInfo>;
  /** Stops a server and starts it again now. */
  restart(name: string): Promise<McpInfo>;
  /** Starts every enabled server that is not running (in the background). */
  startAll(): void;
  /**
   * The model's tools from every enabled server: those ready, and those restarting that listed
   * tools before. Waits up to `waitMs` for servers still starting.
   */
  tools(waitMs: number): Promise<AgentTool[]>;
  /** Stops every server (the stack closes). */
  close(): Promise<void>;
}

export async function loadMcpServers(deps: McpServersDeps): Promise<McpServers> {
  const now = deps.now ?? Date.now;
  let file: McpFile = { mcpServers: {} };
  let problem: string | null = null;
  const stored = await deps.storage.readJson<unknown>(MCP_FILE);
  if (stored !== undefined) {
    try {
      file = parseMcpFile(JSON.stringify(stored));
    } catch (error) {
      // Kept as the user wrote it and shown in Settings with what is wrong; no server starts.
      problem = error instanceof Error ? error.message : String(error);
    }
  }
  let text = stored === undefined ? '' : JSON.stringify(stored, null, 2);
  const servers = new Map<string, Server>();
  if (!problem) for (const [name, config] of Object.entries(file.mcpServers)) servers.set(name, makeServer(name, config));

  const toolInfo = (server: Server): McpToolInfo[] =>
    server.tools.flatMap((tool) => {
      const qualified = qualifiedName(server.name, tool.name);
      return qualified ? [{ name: tool.name, qualified, description: (tool.description ?? '').slice(0, 500) }] : [];
    });
  const info = (): McpInfo => ({
    text,
    error: problem,
    servers: [...servers.values()].map((server) => ({
      name: server.name,
      transport: isStdio(server.config) ? 'stdio' : 'http',
      target: describeTarget(server.config),
      enabled: server.config.disabled !== true,
      state: server.state,
      error: server.error,
      retry_at: server.retryAt,
      starts: server.starts,
      tools: toolInfo(server),
    })),
  });
  const changed = () => deps.emit({ type: 'mcp_changed', mcp: info() });
  const ctx: ServerContext = {
    computer: deps.computer,
    remote: deps.remote,
    now,
    ...(deps.firstRetryMs === undefined ? {} : { firstRetryMs: deps.firstRetryMs }),
    changed,
    current: (server) => servers.get(server.name) === server,
  };

  return {
    info,
    async save(next) {
      const parsed = parseMcpFile(next);
      const value = next.trim() ? (JSON.parse(next) as unknown) : { mcpServers: {} };
      await deps.storage.writeJson(MCP_FILE, value);
      problem = null;
      text = JSON.stringify(value, null, 2);
      file = parsed;
      for (const [name, server] of [...servers]) {
        const config = parsed.mcpServers[name];
        if (config && JSON.stringify(config) === JSON.stringify(server.config)) continue;
        await stop(server);
        servers.delete(name);
      }
      for (const [name, config] of Object.entries(parsed.mcpServers)) if (!servers.has(name)) servers.set(name, makeServer(name, config));
      changed();
      return info();
    },
    async restart(name) {
      const server = servers.get(name);
      if (!server) throw new McpConfigError(`There is no MCP server "${name}".`);
      await stop(server);
      server.failures = 0;
      server.error = null;
      server.retryAt = null;
      void connect(ctx, server);
      return info();
    },
    startAll() {
      for (const server of servers.values()) if (!server.config.disabled && server.state === 'off') void connect(ctx, server);
    },
    async tools(waitMs) {
      const enabled = [...servers.values()].filter((server) => !server.config.disabled);
      for (const server of enabled) if (server.state === 'off') void connect(ctx, server);
      const starting = enabled.map((server) => server.connecting).filter((attempt): attempt is Promise<void> => attempt !== null);
      if (starting.length) await Promise.race([Promise.allSettled(starting), sleep(waitMs)]);
      return enabled.flatMap((server) =>
        server.tools.flatMap((tool) => {
          const qualified = qualifiedName(server.name, tool.name);
          return qualified ? [toolFor(ctx, server, tool, qualified)] : [];
        }),
      );
    },
    async close() {
      await Promise.all([...servers.values()].map(stop));
    },
  };
}
