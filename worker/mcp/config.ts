// The stack's MCP servers, in the file users know from other agents:
// `{"mcpServers": {"name": {"command": "node", "args": ["server.js"], "env": {}}}}` for a server the
// computer runs over stdio, `{"url": "https://…/mcp", "headers": {}}` for a remote one. Kept in
// `.os/config/mcp.json`; `"disabled": true` keeps a server without starting it, `"timeout"` is a
// call's limit in seconds.
import { z } from 'zod';
import { configPath } from '../config-path.ts';

export const MCP_FILE = 'mcp.json';
export const DEFAULT_CALL_TIMEOUT_S = 60;

/**
 * A server's name becomes part of its tools' names (`mcp__<server>__<tool>`), which the model
 * API takes up to 64 characters of letters, digits, `_` and `-`.
 */
const NAME = /^[A-Za-z0-9_-]{1,24}$/;

const common = {
  disabled: z.boolean().optional(),
  timeout: z.number().int().min(1).max(1800, 'a server\'s "timeout" is at most 1800 seconds').optional(),
};

const stdioSchema = z
  .object({
    type: z.literal('stdio').optional(),
    command: z.string().trim().min(1, 'a server needs a "command" (or a "url")').max(4096),
    args: z.array(z.string().max(4096)).max(100).optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an "env" name is letters, digits and _'), z.string().max(10_000)).optional(),
    cwd: z.string().max(4096).optional(),
    ...common,
  })
  .strict();

const httpSchema = z
  .object({
    type: z.enum(['http', 'streamable-http']).optional(),
    url: z
      .string()
      .trim()
      .max(2048)
      .refine((url) => /^https?:\/\//i.test(url) && URL.canParse(url), { message: 'the "url" must be an http(s) address' }),
    headers: z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a header name is a token'), z.string().max(8192)).optional(),
    ...common,
  })
  .strict();

const fileSchema = z
  .object({
    mcpServers: z.record(z.string().regex(NAME, 'a server\'s name is 1-24 letters, digits, _ or -'), z.union([stdioSchema, httpSchema])).default({}),
  })
  .strict();

export type StdioServerConfig = z.infer<typeof stdioSchema>;
export type HttpServerConfig = z.infer<typeof httpSchema>;
export type McpServerConfig = StdioServerConfig | HttpServerConfig;
export type McpFile = z.infer<typeof fileSchema>;

export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
}

export const isStdio = (server: McpServerConfig): server is StdioServerConfig => 'command' in server;

/** Parses and checks the file's text; throws McpConfigError naming what is wrong and where. */
export function parseMcpFile(text: string): McpFile {
  if (!text.trim()) return { mcpServers: {} };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`The MCP servers are not valid JSON: ${error instanceof Error ? error.message : String(error)}.`);
  }
  // A server with both or neither of command and url: say which, not the union's two complaints.
  const servers = (json as { mcpServers?: unknown } | null)?.mcpServers;
  if (servers && typeof servers === 'object') {
    for (const [name, server] of Object.entries(servers as Record<string, unknown>)) {
      if (!server || typeof server !== 'object') throw new McpConfigError(`The MCP servers are not valid: mcpServers.${name}: a server is an object with a "command" or a "url".`);
      const has = (key: string) => key in (server as object);
      if (has('command') && has('url')) throw new McpConfigError(`The MCP servers are not valid: mcpServers.${name}: give a "command" (run in the computer) or a "url" (remote), not both.`);
      if (!has('command') && !has('url')) throw new McpConfigError(`The MCP servers are not valid: mcpServers.${name}: a server needs a "command" (run in the computer) or a "url" (remote).`);
    }
  }
  const parsed = fileSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const inner = issue.code === 'invalid_union' ? (issue.errors.find((branch) => branch.length)?.[0] ?? issue) : issue;
  const path = [...issue.path, ...(inner === issue ? [] : inner.path)];
  const where = configPath(path);
  // A bad record key nests its reason (the name's pattern).
  const nested = 'issues' in inner && Array.isArray(inner.issues) ? (inner.issues as { message: string }[])[0]?.message : undefined;
  const message = inner.code === 'unrecognized_keys' ? `unknown ${inner.keys.length === 1 ? 'key' : 'keys'} ${inner.keys.map((key) => `"${key}"`).join(', ')}` : (nested ?? inner.message);
  throw new McpConfigError(`The MCP servers are not valid: ${where}: ${message}.`);
}

/** How a server is shown: its command line, or its URL. */
export function describeTarget(server: McpServerConfig): string {
  if (!isStdio(server)) return server.url;
  return [server.command, ...(server.args ?? [])].map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : `'${part.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The name the model calls for a server's tool; null when it cannot be one (too long or odd characters). */
export function qualifiedName(server: string, tool: string): string | null {
  const name = `mcp__${server}__${tool}`;
  return /^[A-Za-z0-9_-]{1,64}$/.test(name) ? name : null;
}

/**
 * What an export writes in place of a server's header or env value, or a key in its address, that
 * the user did not choose to give away (that is where API keys and tokens go). A server holding
 * one is not started: it says which value it needs (`missingValues`) until the user fills it in.
 */
export const LEFT_OUT = '<left out of the export: fill in>';

/** One value of one server that an export leaves out unless the user ticks it. */
export interface McpSecret {
  /** What the export dialog hands back to include it; stable for the same file. */
  id: string;
  /** "MCP server 'github': header Authorization". */
  label: string;
}

/** Stands for the whole file when it is not JSON, so its values cannot be told apart. */
export const UNREADABLE_FILE_SECRET: McpSecret = { id: 'mcp.json', label: 'The MCP servers file (it is not a list of servers this app reads, so its values cannot be told apart)' };

const SECRET_KEYS = [
  ['headers', 'header'],
  ['env', 'env'],
] as const;

/** Stands for the user name and password in a server's address. */
const USERINFO = '@';

/** A secret of one server: where it is (`headers`, `env` or `url`, and its name there). */
type Found = McpSecret & { key: 'headers' | 'env' | 'url'; name: string };

function secretsOfServer(server: string, config: unknown): Found[] {
  const fields = objectOrNull(config);
  if (!fields) return [];
  const found: Found[] = [];
  const add = (key: Found['key'], name: string, label: string) => found.push({ id: JSON.stringify([server, key, name]), label: `MCP server '${server}': ${label}`, key, name });
  for (const [key, kind] of SECRET_KEYS) {
    for (const [name, value] of Object.entries(objectOrNull(fields[key]) ?? {})) if (value !== '' && value !== LEFT_OUT) add(key, name, `${kind} ${name}`);
  }
  // Some servers take their key in the address (`…/mcp?api_key=…`, `https://user:key@…`).
  const url = typeof fields.url === 'string' && URL.canParse(fields.url) ? new URL(fields.url) : null;
  if (url && (url.username || url.password) && decodeURIComponent(url.username) !== LEFT_OUT) add('url', USERINFO, 'the user name and password in its address');
  for (const name of new Set(url?.searchParams.keys())) {
    if (url!.searchParams.getAll(name).some((value) => value !== '' && value !== LEFT_OUT)) add('url', name, `"${name}" in its address`);
  }
  return found;
}

/**
 * Every header and env value of the file's servers that holds something (not empty, not already
 * left out), and every parameter and password in a server's address, in the file's order. Read
 * leniently: a file the servers refuse is still a file whose values are the user's. Text that is
 * not such a file (not JSON, or keys other than `mcpServers`) is one secret, the whole file.
 */
export function mcpSecrets(text: string): McpSecret[] {
  if (!text.trim()) return [];
  const servers = serversIn(text);
  if (servers === null) return [UNREADABLE_FILE_SECRET];
  return Object.entries(servers).flatMap(([server, config]) => secretsOfServer(server, config).map(({ id, label }) => ({ id, label })));
}

/**
 * The file with every secret (mcpSecrets) not in `keep` replaced by LEFT_OUT; the text as it is
 * when nothing is left out. A file that cannot be read as servers becomes an empty list of
 * servers unless its id is kept.
 */
export function withoutSecrets(text: string, keep: ReadonlySet<string> = new Set()): string {
  if (!mcpSecrets(text).some((secret) => !keep.has(secret.id))) return text;
  const servers = serversIn(text);
  if (servers === null) return JSON.stringify({ mcpServers: {} }, null, 2);
  const blanked = Object.fromEntries(
    Object.entries(servers).map(([server, config]) => {
      const dropped = secretsOfServer(server, config).filter((secret) => !keep.has(secret.id));
      if (!dropped.length) return [server, config];
      const changed = { ...objectOrNull(config) };
      for (const secret of dropped) {
        if (secret.key !== 'url') changed[secret.key] = { ...objectOrNull(changed[secret.key]), [secret.name]: LEFT_OUT };
      }
      const fromUrl = dropped.filter((secret) => secret.key === 'url');
      if (fromUrl.length) {
        const url = new URL(changed.url as string);
        for (const { name } of fromUrl) {
          if (name !== USERINFO) url.searchParams.set(name, LEFT_OUT);
          else [url.username, url.password] = [LEFT_OUT, ''];
        }
        changed.url = url.href;
      }
      return [server, changed];
    }),
  );
  return JSON.stringify({ mcpServers: blanked }, null, 2);
}

/** The values a server still needs ("header Authorization", "env GITHUB_TOKEN"): those an export left out. */
export function missingValues(server: McpServerConfig): string[] {
  if (isStdio(server)) return Object.entries(server.env ?? {}).flatMap(([name, value]) => (value === LEFT_OUT ? [`env ${name}`] : []));
  const missing = Object.entries(server.headers ?? {}).flatMap(([name, value]) => (value === LEFT_OUT ? [`header ${name}`] : []));
  const url = URL.canParse(server.url) ? new URL(server.url) : null;
  if (url && decodeURIComponent(url.username) === LEFT_OUT) missing.push('the user name and password in its address');
  for (const name of new Set(url?.searchParams.keys())) if (url!.searchParams.get(name) === LEFT_OUT) missing.push(`"${name}" in its address`);
  return missing;
}

/** The file's servers by name; {} when it names none; null when it is not `{"mcpServers": {…}}`. */
function serversIn(text: string): Record<string, unknown> | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const file = objectOrNull(json);
  if (!file || Object.keys(file).some((key) => key !== 'mcpServers')) return null;
  return file.mcpServers === undefined ? {} : objectOrNull(file.mcpServers);
}

function objectOrNull(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}
