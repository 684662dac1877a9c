// A stack template: a `.stack` file (the same format, `template` in its manifest) with what makes a
// stack work the way it does — memory files, skills, settings, permission rules, hooks, the
// heartbeat checklist, MCP servers, its windows — and nothing of what happened in it: no
// transcript or conversation, no uploads or files made, no learned memory database, no secrets,
// and no computer (its disk holds /workspace's files too, so it cannot travel without them yet).
import type { CanvasWindow } from '../protocol.ts';

/** The stack paths a template keeps; everything else stays behind. */
const KEPT = [
  /^\.os\/VERSION$/,
  /^\.os\/memory\/[^/]+\.md$/,
  /^\.os\/skills\/.+/,
  /^\.os\/config\/(settings|hooks|permissions|canvas|mcp)\.json$/,
  /^\.os\/HEARTBEAT\.md$/,
];

export const CANVAS_PATH = '.os/config/canvas.json';
export const MCP_PATH = '.os/config/mcp.json';

export function inTemplate(path: string): boolean {
  return KEPT.some((rule) => rule.test(path));
}

/**
 * The canvas as a template keeps it: its windows but document windows (they show uploads, which
 * stay behind), and none of the user's actions the agent has not heard of yet.
 */
export function templateCanvas(text: string): string {
  let stored: { version?: unknown; windows?: unknown };
  try {
    stored = JSON.parse(text) as typeof stored;
  } catch {
    return JSON.stringify({ version: 1, windows: [] });
  }
  const windows = stored.version === 1 && Array.isArray(stored.windows) ? (stored.windows as CanvasWindow[]) : [];
  return JSON.stringify({ version: 1, windows: windows.filter((win) => win?.kind !== 'document') });
}

/**
 * The MCP servers as a template keeps them: every server, but the values of its `env` and
 * `headers` emptied (they are where API keys go); whoever opens the template fills them in.
 */
export function templateMcp(text: string): string {
  let stored: { mcpServers?: Record<string, Record<string, unknown>> };
  try {
    stored = JSON.parse(text) as typeof stored;
  } catch {
    return JSON.stringify({ mcpServers: {} });
  }
  const servers = stored && typeof stored.mcpServers === 'object' && stored.mcpServers ? stored.mcpServers : {};
  const blank = (values: unknown) => (values && typeof values === 'object' ? Object.fromEntries(Object.keys(values).map((key) => [key, ''])) : values);
  const kept = Object.fromEntries(
    Object.entries(servers).map(([name, server]) => [name, server && typeof server === 'object' ? { ...server, ...('env' in server ? { env: blank(server.env) } : {}), ...('headers' in server ? { headers: blank(server.headers) } : {}) } : server]),
  );
  return JSON.stringify({ mcpServers: kept }, null, 2);
}
