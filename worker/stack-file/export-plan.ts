// Which of a stack's files an export carries and in what form, and what the export dialog tells
// the user before it writes: each part that goes (conversation, memory, files, the computer,
// settings, skills, rules, hooks, MCP servers) with its size, and the secrets it leaves out
// unless ticked. Light: the stacks worker loads it with its list, not with the zip writer.
import { mcpSecrets, withoutSecrets } from '../mcp/config.ts';
import type { ExportContents, ExportPart } from '../../protocol/stacks-api.ts';
import { NEVER_EXPORTED } from './format.ts';
import { MCP_PATH } from './template.ts';
import { isPartialWrite } from '../../storage/atomic-write.ts';
import { listFiles } from '../../storage/walk.ts';

/**
 * The side files SQLite's OPFS VFS keeps beside each database it opens, empty in journal mode
 * DELETE; the format has no place for them (the databases travel as their copies).
 */
const DATABASE_SIDE_FILES = /^\.os\/.+\.db-(wal|shm)$/;

/** True for a stack path an export never carries (docs/stack-file.md "What is never in it"). */
export function leftBehind(path: string): boolean {
  return DATABASE_SIDE_FILES.test(path) || NEVER_EXPORTED.some((rule) => rule.test(path));
}

/** The MCP servers as an export carries them: every header and env value not in `keep` left out. */
export function carriedMcp(text: string, keep: readonly string[] = []): string {
  return withoutSecrets(text, new Set(keep));
}

const LIVE_DATABASES = ['.os/memory/transcript.db', '.os/memory/memory.db'];

/** A file of the stack: its size, or null when it cannot be read now (held open by the stack's workers). */
interface Found {
  path: string;
  size: number | null;
  handle: FileSystemFileHandle;
}

async function walk(dir: FileSystemDirectoryHandle): Promise<Found[]> {
  // The live databases stand for the copies made of them as the stack closes for the export.
  const skip = (path: string, kind: 'file' | 'directory') =>
    kind === 'file' && ((leftBehind(path) && !LIVE_DATABASES.includes(path)) || isPartialWrite(path.slice(path.lastIndexOf('/') + 1)));
  const found = await Promise.all(
    (await listFiles(dir, { skip })).map(async ({ path, handle }) => ({ path, size: await handle.getFile().then((read) => read.size, () => null), handle })),
  );
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function textOf(found: Found | undefined): Promise<string | null> {
  if (!found) return null;
  return found.handle.getFile().then((file) => file.text(), () => null);
}

function jsonOf(text: string | null): unknown {
  try {
    return text === null ? null : (JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}

type Kind = ExportPart['kind'];

/** Which part of the dialog's list a stack path belongs to; null for user space (grouped by folder). */
function kindOf(path: string): Kind | null {
  if (!path.startsWith('.os/')) return null;
  if (path === '.os/memory/transcript.db' || path === '.os/config/conversation.json') return 'conversation';
  if (path.startsWith('.os/memory/')) return 'memory';
  if (path.startsWith('.os/vm/')) return 'computer';
  if (path.startsWith('.os/skills/')) return 'skills';
  if (path === '.os/config/permissions.json') return 'rules';
  if (path === '.os/config/hooks.json') return 'hooks';
  if (path === MCP_PATH) return 'mcp';
  return 'settings';
}

const ORDER: Kind[] = ['conversation', 'memory', 'files', 'computer', 'settings', 'skills', 'rules', 'hooks', 'mcp'];

const plural = (count: number, one: string) => `${count.toLocaleString('en')} ${one}${count === 1 ? '' : 's'}`;

/**
 * What an export of the stack would hold, read from its folder as it is (it may be open: the
 * files its workers hold have no size then). Sizes are of the files as they are now; the
 * databases travel as compacted copies, and the computer's saved state only beside its disk.
 */
export async function exportContents(stack: FileSystemDirectoryHandle): Promise<ExportContents> {
  const files = await walk(stack);
  const at = (path: string) => files.find((found) => found.path === path);
  const machine = jsonOf(await textOf(at('.os/vm/machine.json'))) as { state?: unknown; disk?: unknown } | null;
  const stateCounts = typeof machine?.state === 'string' && machine.state === machine.disk;
  const groups = new Map<string, { kind: Kind; files: Found[] }>();
  for (const found of files) {
    if (found.path === '.os/vm/state.bin' && !stateCounts) continue;
    const kind = kindOf(found.path);
    const key = kind ?? `files:${found.path.includes('/') ? found.path.split('/')[0] : ''}`;
    const group = groups.get(key) ?? { kind: kind ?? 'files', files: [] };
    group.files.push(found);
    groups.set(key, group);
  }
  const mcpText = await textOf(at(MCP_PATH));
  const parts: ExportPart[] = [];
  for (const [key, group] of groups) {
    const unknown = group.files.some((found) => found.size === null);
    const bytes = group.files.reduce((sum, found) => sum + (found.size ?? 0), 0);
    const label = await labelOf(key, group.kind, group.files, mcpText);
    parts.push({ kind: group.kind, label, files: group.files.length, bytes, bytes_known: !unknown });
  }
  parts.sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind) || (a.label < b.label ? -1 : 1));
  return { parts, secrets: mcpText === null ? [] : mcpSecrets(mcpText) };
}

/** The part in plain words, naming what is in it where that is cheap to say. */
async function labelOf(key: string, kind: Kind, files: Found[], mcpText: string | null): Promise<string> {
  switch (kind) {
    case 'conversation':
      return 'The conversation and its history';
    case 'memory':
      return "Memory: its files, what the agent learned, the documents' records and the scheduled tasks";
    case 'files': {
      const folder = key.slice('files:'.length);
      return folder ? `/workspace/${folder}/: ${plural(files.length, 'file')}` : `Files at the top of /workspace: ${plural(files.length, 'file')}`;
    }
    case 'computer':
      return "The computer's disk and its saved state (what it was running)";
    case 'settings':
      return 'Settings (model, endpoint, heartbeat, scans) and the windows on the canvas';
    case 'skills': {
      const names = [...new Set(files.map((found) => found.path.split('/')[2]!))];
      return `Skills: ${names.join(', ')}`;
    }
    case 'rules': {
      const rules = (jsonOf(await textOf(files[0])) as { rules?: unknown } | null)?.rules;
      return `Permission rules${Array.isArray(rules) ? `: ${plural(rules.length, 'rule')}` : ''}`;
    }
    case 'hooks': {
      const events = (jsonOf(await textOf(files[0])) as { hooks?: Record<string, unknown> } | null)?.hooks;
      const groups = events && typeof events === 'object' ? Object.values(events).flatMap((list) => (Array.isArray(list) ? list : [])) : [];
      const commands = groups.reduce((sum: number, group) => sum + (Array.isArray((group as { hooks?: unknown })?.hooks) ? (group as { hooks: unknown[] }).hooks.length : 0), 0);
      return `Hooks (commands run in the computer): ${plural(commands, 'command')}`;
    }
    case 'mcp': {
      const servers = (jsonOf(mcpText) as { mcpServers?: unknown } | null)?.mcpServers;
      const names = servers && typeof servers === 'object' && !Array.isArray(servers) ? Object.keys(servers) : [];
      return `MCP servers${names.length ? `: ${names.join(', ')}` : ''}`;
    }
  }
}
