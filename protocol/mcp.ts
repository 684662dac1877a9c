// MCP servers: the user's own tools and data, run in the computer over stdio or reached remotely.

/** One tool a server offers, as the model sees it (`mcp__<server>__<tool>`). */
export interface McpToolInfo {
  name: string;
  /** The name the model calls. */
  qualified: string;
  description: string;
}

/**
 * A server as Settings shows it. `state`: `off` (disabled, or not started yet), `starting`,
 * `ready`, `failed` (its last start or run ended badly; `error` says how, and `retry_at` when it
 * is tried again, ms since the epoch).
 */
export interface McpServerInfo {
  name: string;
  transport: 'stdio' | 'http';
  /** The command line (stdio) or the URL (http). */
  target: string;
  enabled: boolean;
  state: 'off' | 'starting' | 'ready' | 'failed';
  error: string | null;
  retry_at: number | null;
  /** How many times it was started since the stack opened. */
  starts: number;
  tools: McpToolInfo[];
}

/** The stack's MCP servers: the file as stored (pretty-printed), each server; `error` when the file is not valid (then none runs). */
export interface McpInfo {
  text: string;
  error: string | null;
  servers: McpServerInfo[];
}
