// Permission rules: checked before every tool call. Defaults cannot be removed; the user adds and
// removes their own; the agent can add rules but never remove any (a ratchet).
import { z } from 'zod';
import { compileLinear, RulePatternError, type LinearRegex } from './linear-regex.ts';

export const ruleMatchSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('always') }),
  z.object({ type: z.literal('path_prefix'), prefix: z.string().min(1).max(500) }),
  z.object({ type: z.literal('command'), pattern: z.string().min(1).max(500) }),
  z.object({ type: z.literal('private_network') }),
  z.object({ type: z.literal('address_not_from_user') }),
  z.object({ type: z.literal('delete_many'), threshold: z.number().int().min(0).max(10_000) }),
]);

export const ruleSchema = z.object({
  id: z.string().min(1).max(80),
  source: z.enum(['default', 'user', 'agent']),
  effect: z.enum(['deny', 'ask']),
  /** Tool names, or ["*"] for every tool. */
  tools: z.array(z.string().min(1)).min(1),
  match: ruleMatchSchema,
  reason: z.string().min(1).max(300),
});

export type { PermissionRule, RuleMatch } from '../../protocol/permissions.ts';
import type { PermissionRule } from '../../protocol/permissions.ts';

// The schema and the protocol's type must describe the same thing.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _schemaMatchesProtocol: Same<z.infer<typeof ruleSchema>, PermissionRule> = true;
void _schemaMatchesProtocol;

export type Decision =
  | { decision: 'allow' }
  | { decision: 'deny' | 'ask'; rule: PermissionRule };

export interface ToolCall {
  tool: string;
  input: unknown;
}

/** What a rule may know beyond the call itself. */
export interface CallContext {
  /**
   * Hosts the user named in their own messages, or allowed with a click this session. Text the
   * agent read (documents, pages, tool output) never adds to it.
   */
  userHosts: ReadonlySet<string>;
}

const NO_CONTEXT: CallContext = { userHosts: new Set() };

const PATH_TOOLS = ['write', 'edit', 'read', 'export_file'];

/** Commands that could wreck the machine or the whole workspace, whatever the reason given. */
const CATASTROPHIC = [
  // rm with a recursive flag aimed at /, /*, ~, $HOME or the whole workspace
  String.raw`\brm\s+(?:-\S+\s+)*(?:-\S*[rR]\S*|--recursive)\s+(?:-\S+\s+)*["']?(?:/|/\*|~/?|\$HOME/?|/workspace/?\*?)["']?(?=\s|;|&|\||$)`,
  String.raw`\bmkfs(?:\.\w+)?\b`,
  String.raw`\bdd\b[^;|&\n]*\bof=/dev/`,
  String.raw`>\s*/dev/(?:sd|hd|vd|nvme)`,
  String.raw`:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}`,
  String.raw`\bch(?:mod|own)\s+(?:-\S+\s+)*-\S*R\S*\s+(?:-\S+\s+)*\S+\s+/(?=\s|$)`,
];

/** Asks before each MCP tool's first call (worker/mcp); the gate remembers a yes while the stack is open. */
export const MCP_RULE_ID = 'default:ask-before-mcp-tools';

export const DEFAULT_RULES: PermissionRule[] = [
  {
    id: 'default:no-system-space',
    source: 'default',
    effect: 'deny',
    tools: PATH_TOOLS,
    match: { type: 'path_prefix', prefix: '.os/' },
    reason: '.os/ is the system space (memory, settings, databases); the agent never writes it directly.',
  },
  {
    id: 'default:no-catastrophic-commands',
    source: 'default',
    effect: 'deny',
    tools: ['bash'],
    match: { type: 'command', pattern: CATASTROPHIC.join('|') },
    reason: 'This command could destroy the whole machine or workspace.',
  },
  {
    id: 'default:no-private-network',
    source: 'default',
    effect: 'deny',
    tools: ['web_fetch'],
    match: { type: 'private_network' },
    reason: 'Fetching private, loopback or link-local addresses is not allowed.',
  },
  {
    id: 'default:ask-before-addresses-not-from-you',
    source: 'default',
    effect: 'ask',
    tools: ['web_fetch', 'bash'],
    match: { type: 'address_not_from_user' },
    reason: 'You did not give this web address. Documents and web pages can tell the assistant to send your data to addresses like it.',
  },
  {
    id: 'default:ask-before-saving-skills',
    source: 'default',
    effect: 'ask',
    tools: ['save_skill'],
    match: { type: 'always' },
    reason: 'The assistant wants to save a skill (a procedure it will follow again); the request shows what it says and which tools it uses.',
  },
  {
    id: 'default:ask-before-scheduling',
    source: 'default',
    effect: 'ask',
    tools: ['schedule_task'],
    match: { type: 'always' },
    reason: 'The assistant wants to schedule work that runs later on its own; the request shows what and when. A document or web page could ask it to do this.',
  },
  {
    id: 'default:ask-before-changing-rules',
    source: 'default',
    effect: 'ask',
    tools: ['add_permission_rule'],
    match: { type: 'always' },
    reason: 'The assistant wants to add a permission rule; only you decide what it may and may not do.',
  },
  {
    id: MCP_RULE_ID,
    source: 'default',
    effect: 'ask',
    tools: ['mcp__*'],
    match: { type: 'always' },
    reason: 'A tool of an MCP server you connected: it can reach whatever that server reaches. Asked the first time for each tool while the stack is open.',
  },
  {
    id: 'default:ask-before-deleting-many',
    source: 'default',
    effect: 'ask',
    tools: ['bash'],
    match: { type: 'delete_many', threshold: 3 },
    reason: 'This deletes more than a few files.',
  },
];

/** Deny wins over ask; the first matching rule of the strongest effect is reported. */
export function evaluate(rules: PermissionRule[], call: ToolCall, context: CallContext = NO_CONTEXT): Decision {
  let ask: PermissionRule | undefined;
  for (const rule of rules) {
    if (!rule.tools.some((name) => toolMatches(name, call.tool))) continue;
    const matched = matches(rule, call.input, context);
    if (!matched) continue;
    const reported = matched === true ? rule : { ...rule, reason: `${rule.reason} (${matched.unusable})` };
    if (rule.effect === 'deny') return { decision: 'deny', rule: reported };
    ask ??= reported;
  }
  return ask ? { decision: 'ask', rule: ask } : { decision: 'allow' };
}

/** A rule's tool name: exact, "*" for every tool, or a prefix ending in "*" ("mcp__*", "mcp__crm__*"). */
export function toolMatches(name: string, tool: string): boolean {
  return name === '*' || name === tool || (name.endsWith('*') && tool.startsWith(name.slice(0, -1)));
}

/** True or false; for a command rule whose pattern cannot run, a match with the reason why. */
function matches(rule: PermissionRule, input: unknown, context: CallContext): boolean | { unusable: string } {
  const { match } = rule;
  const fields = (input ?? {}) as Record<string, unknown>;
  switch (match.type) {
    case 'always':
      return true;
    case 'path_prefix':
      return typeof fields.path === 'string' && underPrefix(rulePath(fields.path), match.prefix);
    case 'command': {
      if (typeof fields.command !== 'string') return false;
      const pattern = commandPattern(match.pattern, rule.source === 'default');
      // A stored pattern that cannot run catches every command: the rule was meant to stop some.
      return 'unusable' in pattern ? pattern : pattern.test(fields.command);
    }
    case 'private_network':
      return typeof fields.url === 'string' && isPrivateUrl(fields.url);
    case 'address_not_from_user': {
      // In a command or the Python code bash runs instead, the computer's own loopback (a server
      // started in it) goes nowhere.
      const code = typeof fields.command === 'string' ? fields.command : typeof fields.python === 'string' ? fields.python : null;
      const urls = typeof fields.url === 'string' ? [fields.url] : code !== null ? urlsIn(code).filter((url) => !isLoopback(hostOf(url))) : [];
      return urls.some((url) => {
        const host = hostOf(url);
        return host === null || !isNamedHost(host, context.userHosts);
      });
    }
    case 'delete_many':
      return typeof fields.command === 'string' && deletesMany(fields.command, match.threshold);
  }
}

/**
 * A path as the computer sees it from /workspace, with "." and ".." resolved, repeated slashes
 * dropped and /workspace/ taken off: "././documents/x", "documents/../documents/x" and
 * "/workspace/documents/x" are all "documents/x". A path outside /workspace stays absolute
 * ("/etc/passwd"), so no rule on the user space matches it (the tools refuse it anyway).
 * normaliseUserPath (user-files.ts) throws on ".." and ".os" instead, where a rule must compare.
 */
export function rulePath(path: string): string {
  const trimmed = path.trim().normalize('NFC');
  const absolute = trimmed.startsWith('/') ? trimmed : `/workspace/${trimmed}`;
  const parts: string[] = [];
  for (const part of absolute.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts[0] === 'workspace' ? parts.slice(1).join('/') : `/${parts.join('/')}`;
}

function underPrefix(path: string, prefix: string): boolean {
  const base = rulePath(prefix);
  if (path === base) return true;
  // "documents/" covers the folder and what is in it; "doc" every path that starts so.
  const folder = /\/\s*$/.test(prefix) && base !== '' && !base.endsWith('/') ? `${base}/` : base;
  return path.startsWith(folder);
}

const patterns = new Map<string, { test(text: string): boolean } | { unusable: string }>();

/**
 * The built-in patterns (ours, with lookahead) run on V8's engine; any other on the linear-time
 * one. Compiled once per pattern.
 */
function commandPattern(pattern: string, builtIn: boolean): LinearRegex | { unusable: string } {
  const key = `${builtIn ? 'd' : 'u'}:${pattern}`;
  let compiled = patterns.get(key);
  if (!compiled) {
    try {
      compiled = builtIn ? new RegExp(pattern) : compileLinear(pattern);
    } catch (error) {
      compiled = { unusable: `${error instanceof Error ? error.message : String(error)} Change or remove this rule in Settings → Permissions.` };
    }
    patterns.set(key, compiled);
  }
  return compiled;
}

/**
 * Why a command pattern cannot be a rule's, worded for the user, or null: it must be a valid
 * regular expression without backreferences or lookaround (see linear-regex.ts).
 */
export function commandPatternProblem(pattern: string): string | null {
  try {
    compileLinear(pattern);
    return null;
  } catch (error) {
    if (error instanceof RulePatternError) return error.message;
    throw error;
  }
}

/** The URL's host, lower case, without a leading "www."; null when it does not parse. */
export function hostOf(url: string): string | null {
  try {
    return normaliseHost(new URL(url).hostname);
  } catch {
    return null;
  }
}

function normaliseHost(host: string): string {
  return host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '').replace(/^www\./, '');
}

function isLoopback(host: string | null): boolean {
  return host === 'localhost' || host === '::1' || (host !== null && /^127\.\d+\.\d+\.\d+$/.test(host));
}

/** A named host covers itself and its subdomains ("example.com" covers "docs.example.com"). */
function isNamedHost(host: string, named: ReadonlySet<string>): boolean {
  if (named.has(host)) return true;
  const labels = host.split('.');
  for (let i = 1; i < labels.length - 1; i++) if (named.has(labels.slice(i).join('.'))) return true;
  return false;
}

// Endings that make "report.pdf" a file name in a sentence, not a host the user meant.
const FILE_ENDINGS = new Set(
  'pdf txt csv tsv md json xml png jpg jpeg gif webp tif tiff bmp heic zip gz tgz xlsx xls docx doc odt ods pptx py sh js ts tsx mjs html htm css log yaml yml toml ini sql db eml msg'.split(' '),
);

/** Web and FTP addresses written out in a text (e.g. a shell command). */
function urlsIn(text: string): string[] {
  return [...text.matchAll(/\b(?:https?|ftps?):\/\/[^\s<>"'`)|;&]+/gi)].map(([url]) => url);
}

/**
 * The hosts a piece of the user's own text names: in URLs ("https://shop.example/x") and as bare
 * names ("example.com"), lower case, without "www.". File names are not hosts.
 */
export function hostsNamedIn(text: string): Set<string> {
  const hosts = new Set<string>();
  for (const url of urlsIn(text)) {
    const host = hostOf(url);
    if (host) hosts.add(host);
  }
  for (const [name] of text.matchAll(/(?<![\w@./-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}(?![\w-]|\.\w)/gi)) {
    const ending = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
    if (!FILE_ENDINGS.has(ending)) hosts.add(normaliseHost(name));
  }
  return hosts;
}

/** `rm` with a recursive flag, a wildcard, or more than `threshold` paths; also find -delete. */
export function deletesMany(command: string, threshold: number): boolean {
  if (/\bfind\b[^;|&]*\s-delete\b/.test(command) || /\bxargs\s+(-\S+\s+)*rm\b/.test(command)) return true;
  for (const segment of command.split(/[;&|]+|\n/)) {
    const words = segment.trim().split(/\s+/);
    const at = words.findIndex((word) => word === 'rm' || word.endsWith('/rm'));
    if (at < 0) continue;
    const args = words.slice(at + 1);
    const flags = args.filter((arg) => arg.startsWith('-'));
    const paths = args.filter((arg) => !arg.startsWith('-'));
    if (flags.some((flag) => /^-[^-]*[rR]/.test(flag) || flag === '--recursive')) return true;
    if (paths.some((path) => /[*?[]/.test(path))) return true;
    if (paths.length > threshold) return true;
  }
  return false;
}

/** Loopback, private (RFC 1918, ULA), link-local, CGNAT and local names. Unparseable URLs count. */
export function isPrivateUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return true;
  }
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal') || !host.includes('.') && !host.includes(':')) {
    return true;
  }
  const v4 = host.match(/^(\d+)\.(\d+)\.(\d+)\.(\d+)$/);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224;
  }
  if (host.includes(':')) {
    return host === '::1' || host === '::' || /^f[cd]/.test(host) || /^fe[89ab]/.test(host) || /^::ffff:/.test(host);
  }
  return false;
}
