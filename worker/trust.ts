// A stack's origin and what its owner allowed of what it brought. A stack made here has no trust
// record and is its owner's. A stack from a file (imported, opened from the OS, shared to the app,
// a template someone gave) opens restricted: at its first open everything it brought that runs or
// sends — its model endpoint, OCR engine, network, heartbeat, hooks, MCP servers, permission
// rules, scheduled tasks, skills, and the hosts its history names — is taken out of use and held
// in the record, and comes back only item by item as the owner allows it (Review).
import { userHostsOf } from './conversation.ts';
import type { MessageParam } from './agent/types.ts';
import { HEARTBEAT_FILE } from './heartbeat.ts';
import { hostsNamedIn } from './permissions/rules.ts';
import type { PermissionRule } from '../protocol/permissions.ts';
import type { Settings } from '../protocol/settings.ts';
import type { TrustItem, TrustState } from '../protocol/trust.ts';
import type { StackStorage } from '../storage/json-files.ts';
import { isTrustFile, newTrustRecord, TRUST_FILE, type Held, type HeldHook, type HeldSettings, type HeldTask, type TrustFile } from './trust-record.ts';

/** What the intake reads and changes in the stack. */
export interface TrustDeps {
  storage: StackStorage;
  /** Reads the stack's own files (`.os/...`). */
  files: {
    readText(path: string): Promise<string | undefined>;
    list(path: string): Promise<{ name: string; kind: 'file' | 'directory' }[]>;
  };
  tasks: {
    list(): Promise<{ id: string; title: string; prompt: string; kind: string; at: number | null; cron: string | null; timezone: string | null; status: string }[]>;
    update(id: string, patch: { status: 'paused' }): Promise<unknown>;
  };
  /** This browser's own settings for a new stack: what a held endpoint is replaced by. */
  defaults: Settings;
  /** Reads a skill's description for the review (the skill is not offered meanwhile). */
  describeSkill(text: string): Promise<string>;
}

export interface Trust {
  /** Null for a stack made here. */
  state(): TrustState | null;
  /** True while a held skill of this name is not allowed: it is not offered to the agent. */
  holdsSkill(name: string): boolean;
  /** Hosts the stack's history named that do not count as the user's (empty once allowed). */
  heldHosts(): ReadonlySet<string>;
  /** A skill the owner installs under a held name is theirs. */
  release(itemId: string): Promise<void>;
  held(): Held | null;
  /** Records the owner's answers (and what they became) and ends restricted mode. */
  record(decisions: Record<string, boolean>, appliedRules: Record<string, string | null>): Promise<TrustState | null>;
  appliedRule(itemId: string): string | undefined;
}

/**
 * Reads the stack's trust record and, at the first open of a stack from elsewhere, holds what it
 * brought. Must run before the settings, rules, hooks, MCP servers and tasks are loaded.
 */
export async function loadTrust(deps: TrustDeps): Promise<Trust> {
  let file = await deps.storage.readJson<TrustFile>(TRUST_FILE);
  if (file !== undefined && !isTrustFile(file)) {
    // A record that does not read is not a reason to trust: the stack is held as if just imported.
    file = newTrustRecord('stack_file', null, Date.now());
  }
  if (file && file.intake !== 'done') {
    const held = file.held ?? (await collect(deps));
    file = { ...file, held, intake: 'pending' };
    await deps.storage.writeJson(TRUST_FILE, file);
    await takeOutOfUse(deps, held);
    file = { ...file, intake: 'done' };
    await deps.storage.writeJson(TRUST_FILE, file);
  }
  let current = file ?? null;
  const heldHosts = () => {
    if (!current?.held || current.decisions.hosts === true) return new Set<string>();
    return new Set(current.held.hosts);
  };
  let hosts = heldHosts();
  const save = async (next: TrustFile) => {
    await deps.storage.writeJson(TRUST_FILE, next);
    current = next;
    hosts = heldHosts();
  };
  return {
    state: () => (current ? stateOf(current) : null),
    holdsSkill: (name) => !!current?.held?.skills.some((skill) => skill.name === name) && current.decisions[`skill:${name}`] !== true,
    heldHosts: () => hosts,
    held: () => current?.held ?? null,
    appliedRule: (id) => current?.applied_rules?.[id],
    async release(itemId) {
      if (!current?.held || current.decisions[itemId] === true) return;
      await save({ ...current, decisions: { ...current.decisions, [itemId]: true } });
    },
    async record(decisions, appliedRules) {
      if (!current) return null;
      const applied = { ...current.applied_rules };
      for (const [id, rule] of Object.entries(appliedRules)) {
        if (rule === null) delete applied[id];
        else applied[id] = rule;
      }
      await save({ ...current, decisions: { ...current.decisions, ...decisions }, applied_rules: applied, reviewed_at: Date.now() });
      return stateOf(current);
    },
  };
}

/** Everything the stack brought that would run or send, read from its own files. */
async function collect(deps: TrustDeps): Promise<Held> {
  const settings = (await deps.storage.readJson<Record<string, unknown>>('settings.json')) ?? {};
  const held: HeldSettings = {};
  const own = deps.defaults;
  if ((typeof settings.provider === 'string' && settings.provider !== own.provider) || (typeof settings.endpoint === 'string' && settings.endpoint !== own.endpoint)) {
    if (typeof settings.provider === 'string') held.provider = settings.provider as Settings['provider'];
    if (typeof settings.endpoint === 'string') held.endpoint = settings.endpoint;
  }
  if (settings.ocr_engine === 'mistral') held.ocr_engine = 'mistral';
  // An older file without the field had the network on whenever the device was paired.
  if (settings.computer_network !== false) held.computer_network = true;
  if (typeof settings.heartbeat_minutes === 'number' && settings.heartbeat_minutes > 0) held.heartbeat_minutes = settings.heartbeat_minutes;

  const hooks: HeldHook[] = [];
  const hooksFile = (await deps.storage.readJson<{ hooks?: Record<string, unknown> }>('hooks.json'))?.hooks;
  if (hooksFile && typeof hooksFile === 'object') {
    for (const [event, groups] of Object.entries(hooksFile)) {
      if (!Array.isArray(groups)) continue;
      for (const group of groups as { matcher?: unknown; hooks?: unknown }[]) {
        if (!Array.isArray(group?.hooks)) continue;
        for (const hook of group.hooks as { command?: unknown; timeout?: unknown }[]) {
          if (typeof hook?.command !== 'string') continue;
          hooks.push({ event, ...(typeof group.matcher === 'string' ? { matcher: group.matcher } : {}), command: hook.command, ...(typeof hook.timeout === 'number' ? { timeout: hook.timeout } : {}) });
        }
      }
    }
  }
  const mcpServers = (await deps.storage.readJson<{ mcpServers?: Record<string, unknown> }>('mcp.json'))?.mcpServers;
  const mcp: Held['mcp'] = {};
  if (mcpServers && typeof mcpServers === 'object') {
    for (const [name, config] of Object.entries(mcpServers)) if (config && typeof config === 'object') mcp[name] = config as Record<string, unknown>;
  }
  const rulesFile = await deps.storage.readJson<{ rules?: unknown }>('permissions.json');
  const rules = (Array.isArray(rulesFile?.rules) ? rulesFile.rules : []).filter((rule): rule is PermissionRule => !!rule && typeof rule === 'object' && (rule as PermissionRule).source !== 'default');

  const skills: Held['skills'] = [];
  for (const entry of await deps.files.list('.os/skills')) {
    if (entry.kind !== 'directory') continue;
    const text = await deps.files.readText(`.os/skills/${entry.name}/SKILL.md`);
    if (text !== undefined) skills.push({ name: entry.name, description: await deps.describeSkill(text).catch(() => '(its SKILL.md does not read)') });
  }
  const tasks: HeldTask[] = [];
  const prompts: string[] = [];
  for (const task of await deps.tasks.list()) {
    prompts.push(task.title, task.prompt);
    if (task.status !== 'active') continue;
    tasks.push({ id: task.id, title: task.title, prompt: task.prompt, schedule: describeSchedule(task) });
  }
  // Hosts anywhere the stack's author could write: none of them was named by this browser's owner.
  const conversation = await deps.storage.readJson<{ messages?: MessageParam[] }>('conversation.json');
  const hosts = new Set(Array.isArray(conversation?.messages) ? userHostsOf(conversation.messages) : []);
  const canvas = await deps.storage.readJson<unknown>('canvas.json');
  const checklist = (await deps.files.readText(HEARTBEAT_FILE)) ?? '';
  for (const text of [...prompts, canvas === undefined ? '' : JSON.stringify(canvas), checklist]) for (const host of hostsNamedIn(text)) hosts.add(host);
  return { settings: held, hooks, mcp, rules, skills, tasks, hosts: [...hosts].sort() };
}

/** Makes the stack's own files hold none of what is held. Safe to repeat (a first open cut short does it again). */
async function takeOutOfUse(deps: TrustDeps, held: Held): Promise<void> {
  const settings = (await deps.storage.readJson<Record<string, unknown>>('settings.json')) ?? {};
  const own = deps.defaults;
  const { kiosk: _kiosk, ...kept } = settings;
  await deps.storage.writeJson('settings.json', {
    ...kept,
    provider: own.provider,
    endpoint: own.endpoint,
    ocr_engine: 'local',
    computer_network: false,
    heartbeat_minutes: 0,
  });
  // A key that came with the file is never used: the owner's own is entered here.
  await deps.storage.writeJson('secrets.json', {});
  if (held.hooks.length) await deps.storage.writeJson('hooks.json', { hooks: {} });
  if (Object.keys(held.mcp).length) await deps.storage.writeJson('mcp.json', { mcpServers: {} });
  if (held.rules.length) await deps.storage.writeJson('permissions.json', { version: 1, rules: [] });
  for (const task of held.tasks) await deps.tasks.update(task.id, { status: 'paused' });
}

function describeSchedule(task: { kind: string; at: number | null; cron: string | null; timezone: string | null }): string {
  if (task.kind === 'cron') return `on the schedule "${task.cron}" (${task.timezone ?? 'UTC'})`;
  if (task.kind === 'once' && task.at !== null) return `once, at ${new Date(task.at).toISOString().replace('T', ' ').slice(0, 16)} UTC (at once if that has passed)`;
  return 'from the backlog, whenever the stack is idle';
}

const HOOK_WHEN: Record<string, string> = {
  PreToolUse: 'before',
  PostToolUse: 'after',
};

/** The review's items: what each held thing would do, exactly, with the owner's answer. */
export function itemsOf(held: Held, decisions: Record<string, boolean>): TrustItem[] {
  const items: TrustItem[] = [];
  const add = (item: Omit<TrustItem, 'allowed'>) => items.push({ ...item, allowed: decisions[item.id] ?? null });
  const s = held.settings;
  if (s.provider !== undefined || s.endpoint !== undefined) {
    const who = s.provider === 'anthropic' ? 'Anthropic directly' : s.provider === 'openai' ? 'an OpenAI-compatible server' : 'a Stackdocs proxy';
    add({ id: 'endpoint', kind: 'endpoint', title: `Send your messages, documents and the computer's traffic to ${who} it names`, detail: s.endpoint ?? '(that provider\'s usual address)' });
  }
  if (s.ocr_engine === 'mistral') add({ id: 'ocr', kind: 'ocr', title: 'Send scans to Mistral OCR through the proxy', detail: 'Scans are read in this browser until you allow it.' });
  if (s.computer_network) add({ id: 'network', kind: 'network', title: 'Let the computer reach the internet', detail: 'Through your own proxy, to the hosts it allows (pip, npm, Debian, GitHub by default).' });
  if (s.heartbeat_minutes) add({ id: 'heartbeat', kind: 'heartbeat', title: 'Let the agent check in on its own', detail: `Every ${s.heartbeat_minutes} minute${s.heartbeat_minutes === 1 ? '' : 's'}, with its checklist (.os/HEARTBEAT.md).` });
  for (const hook of held.hooks) {
    const when =
      hook.event in HOOK_WHEN
        ? `${HOOK_WHEN[hook.event]} ${hook.matcher ? `each call of a tool matching /${hook.matcher}/` : 'every tool call'}`
        : hook.event === 'UserPromptSubmit'
          ? 'on every message you send'
          : 'each time the agent stops';
    add({ id: hookId(hook), kind: 'hook', title: `Run a command as root in the computer ${when}`, detail: hook.command });
  }
  for (const [name, config] of Object.entries(held.mcp)) {
    const remote = typeof config.url === 'string';
    const args = Array.isArray(config.args) ? config.args.map(String).join(' ') : '';
    const secrets = [...Object.keys((config.headers as object | undefined) ?? {}).map((h) => `header ${h}`), ...Object.keys((config.env as object | undefined) ?? {}).map((e) => `env ${e}`)];
    add({
      id: `mcp:${name}`,
      kind: 'mcp',
      title: remote ? `Connect to the MCP server "${name}" through the proxy` : `Start the MCP server "${name}" in the computer`,
      detail: `${remote ? String(config.url) : `${String(config.command)}${args ? ` ${args}` : ''}`}${secrets.length ? ` (with ${secrets.join(', ')})` : ''}`,
    });
  }
  for (const rule of held.rules) {
    add({ id: `rule:${rule.id}`, kind: 'rule', title: `Add a permission rule: ${rule.effect} ${rule.tools.join(', ')} ${describeMatch(rule.match)}`, detail: rule.reason });
  }
  for (const skill of held.skills) add({ id: `skill:${skill.name}`, kind: 'skill', title: `Offer the skill "${skill.name}" to the agent`, detail: skill.description });
  for (const task of held.tasks) add({ id: `task:${task.id}`, kind: 'task', title: `Run the scheduled task "${task.title}" ${task.schedule}`, detail: task.prompt });
  if (held.hosts.length) add({ id: 'hosts', kind: 'hosts', title: 'Count the web addresses in its conversation, tasks and notes as ones you named', detail: held.hosts.join(', ') });
  return items;
}

export function hookId(hook: HeldHook): string {
  return `hook:${hook.event}:${hook.matcher ?? ''}:${hook.command}`;
}

function describeMatch(match: PermissionRule['match']): string {
  switch (match.type) {
    case 'always':
      return 'always';
    case 'path_prefix':
      return `for paths under ${match.prefix}`;
    case 'command':
      return `for commands matching /${match.pattern}/`;
    case 'private_network':
      return 'for private addresses';
    case 'address_not_from_user':
      return 'for addresses you did not give';
    case 'delete_many':
      return `when deleting more than ${match.threshold} files`;
  }
}

function stateOf(record: TrustFile): TrustState {
  return {
    origin: record.origin,
    file_name: record.file_name ?? null,
    arrived_at: record.arrived_at,
    restricted: record.reviewed_at === null,
    items: record.held ? itemsOf(record.held, record.decisions) : [],
  };
}
