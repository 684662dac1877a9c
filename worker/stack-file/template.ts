// A stack template: a `.stack` file (the same format, `template` in its manifest) with what makes a
// stack work the way it does — memory files, skills, settings, permission rules, hooks, the
// heartbeat checklist, MCP servers, its windows — and nothing of what happened in it: no
// transcript or conversation, no uploads or files made, no learned memory database, no secrets,
// and no computer (its disk holds /workspace's files too, so it cannot travel without them yet).
import type { CanvasWindow } from '../../protocol/windows.ts';
import { withoutSecrets } from '../mcp/config.ts';

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
 * The MCP servers as a template keeps them: every server, but each value of its `env` and
 * `headers` left out (mcp/config.ts `LEFT_OUT`: they are where API keys go); whoever opens the
 * template fills them in, and until then the server says which it needs.
 */
export function templateMcp(text: string): string {
  return withoutSecrets(text);
}
