// A stack from elsewhere: what it brought, and the owner's review, which puts back into use
// exactly the items allowed (and takes out again the ones no longer allowed).
import { HooksError } from '../hooks.ts';
import { McpConfigError } from '../mcp/config.ts';
import type { SettingsPatch } from '../../protocol/settings.ts';
import type { Trust } from '../trust.ts';
import type { HeldHook } from '../trust-record.ts';
import { hookId } from '../trust.ts';
import type { Handlers, StackContext } from './context.ts';
import { RequestError } from '../request-error.ts';

export function trustHandlers(ctx: StackContext, trust: Trust, updateSettings: (patch: SettingsPatch) => Promise<unknown>): Handlers<'get_trust' | 'review_trust'> {
  return {
    async get_trust() {
      return trust.state();
    },

    async review_trust(params) {
      const state = trust.state();
      const held = trust.held();
      if (!state || !held) throw new RequestError({ code: 'bad_request', message: 'This stack was made here: there is nothing to review.' });
      const given = params?.decisions;
      if (!given || typeof given !== 'object' || Array.isArray(given)) throw new RequestError({ code: 'bad_request', message: 'A review names each item with true (allow) or false (keep it held).' });
      const items = new Map(state.items.map((item) => [item.id, item]));
      for (const [id, allowed] of Object.entries(given)) {
        if (!items.has(id)) throw new RequestError({ code: 'bad_request', message: `This stack brought no item "${id}".` });
        if (typeof allowed !== 'boolean') throw new RequestError({ code: 'bad_request', message: `The answer for "${id}" must be true or false.` });
      }

      const recorded: Record<string, boolean> = {};
      const appliedRules: Record<string, string | null> = {};
      const failed: string[] = [];
      const settingsPatch: SettingsPatch = {};
      let hooksText: string | null = null;
      let mcpText: string | null = null;
      for (const item of state.items) {
        const allowed = given[item.id] ?? item.allowed ?? false;
        const was = item.allowed === true;
        // Every answer is recorded (the review ends restricted mode); only a change is applied.
        recorded[item.id] = allowed;
        if (allowed === was) continue;
        try {
          switch (item.kind) {
            case 'endpoint': {
              const mine = ctx.settings.provider === held.settings.provider && ctx.settings.endpoint === held.settings.endpoint;
              if (allowed) Object.assign(settingsPatch, { ...(held.settings.provider ? { provider: held.settings.provider } : {}), ...(held.settings.endpoint ? { endpoint: held.settings.endpoint } : {}) });
              else if (mine) Object.assign(settingsPatch, { provider: ctx.deps.defaults.provider, endpoint: ctx.deps.defaults.endpoint });
              break;
            }
            case 'ocr':
              settingsPatch.ocr_engine = allowed ? 'mistral' : 'local';
              break;
            case 'network':
              settingsPatch.computer_network = allowed;
              break;
            case 'heartbeat':
              settingsPatch.heartbeat_minutes = allowed ? (held.settings.heartbeat_minutes ?? 0) : 0;
              break;
            case 'hook': {
              const hook = held.hooks.find((candidate) => hookId(candidate) === item.id)!;
              hooksText = withHook(hooksText ?? ctx.hooks.info().text, hook, allowed);
              break;
            }
            case 'mcp': {
              const name = item.id.slice('mcp:'.length);
              mcpText = withServer(mcpText ?? ctx.mcp.info().text, name, held.mcp[name]!, allowed);
              break;
            }
            case 'rule': {
              const rule = held.rules.find((candidate) => `rule:${candidate.id}` === item.id)!;
              if (allowed) {
                const added = await ctx.gate.addRule({ effect: rule.effect, tools: rule.tools, match: rule.match, reason: rule.reason }, 'user');
                appliedRules[item.id] = added.id;
              } else {
                const applied = trust.appliedRule(item.id);
                if (applied && ctx.gate.rules().some((candidate) => candidate.id === applied)) await ctx.gate.removeRule(applied);
                appliedRules[item.id] = null;
              }
              break;
            }
            case 'task': {
              const id = item.id.slice('task:'.length);
              const task = (await ctx.tasks.list()).find((candidate) => candidate.id === id);
              if (task && (task.status === 'paused') === allowed) await ctx.tasks.update(id, { paused: !allowed });
              break;
            }
            case 'skill':
            case 'hosts':
              // Asked of the trust record where they are used (the skills' list, the user's hosts).
              break;
          }
        } catch (error) {
          delete recorded[item.id];
          failed.push(`${item.title}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      try {
        if (hooksText !== null) await ctx.hooks.save(hooksText);
      } catch (error) {
        for (const item of state.items) if (item.kind === 'hook') delete recorded[item.id];
        failed.push(`The hooks: ${error instanceof HooksError ? error.message : String(error)}`);
      }
      try {
        if (mcpText !== null) {
          await ctx.mcp.save(mcpText);
          ctx.mcp.startAll();
        }
      } catch (error) {
        for (const item of state.items) if (item.kind === 'mcp') delete recorded[item.id];
        failed.push(`The MCP servers: ${error instanceof McpConfigError ? error.message : String(error)}`);
      }
      if (Object.keys(settingsPatch).length) await updateSettings(settingsPatch);
      const next = await trust.record(recorded, appliedRules);
      ctx.emit({ type: 'trust_changed', trust: next });
      if (failed.length) throw new RequestError({ code: 'bad_request', message: `Some of what you allowed could not be put to use, and stays held: ${failed.join('; ')}` });
      return next;
    },
  };
}

/** The hooks file with one hook added (or removed); text as Settings shows it. */
function withHook(text: string, hook: HeldHook, add: boolean): string {
  const file = (text.trim() ? JSON.parse(text) : { hooks: {} }) as { hooks: Record<string, { matcher?: string; hooks: { type?: string; command: string; timeout?: number }[] }[]> };
  file.hooks ??= {};
  const groups = (file.hooks[hook.event] ??= []);
  const same = (group: { matcher?: string }) => (group.matcher ?? '') === (hook.matcher ?? '');
  if (add) {
    const group = groups.find(same);
    const entry = { type: 'command', command: hook.command, ...(hook.timeout !== undefined ? { timeout: hook.timeout } : {}) };
    if (group) {
      if (!group.hooks.some((h) => h.command === hook.command)) group.hooks.push(entry);
    } else {
      groups.push({ ...(hook.matcher !== undefined ? { matcher: hook.matcher } : {}), hooks: [entry] });
    }
  } else {
    for (const group of groups.filter(same)) group.hooks = group.hooks.filter((h) => h.command !== hook.command);
    file.hooks[hook.event] = groups.filter((group) => group.hooks.length > 0);
  }
  if (!file.hooks[hook.event]!.length) delete file.hooks[hook.event];
  return JSON.stringify(file, null, 2);
}

/** The MCP file with one server added (not over one of the owner's of that name) or removed (only if still as it came). */
function withServer(text: string, name: string, config: Record<string, unknown>, add: boolean): string {
  const file = (text.trim() ? JSON.parse(text) : { mcpServers: {} }) as { mcpServers: Record<string, unknown> };
  file.mcpServers ??= {};
  const current = file.mcpServers[name];
  if (add) {
    if (current !== undefined && JSON.stringify(current) !== JSON.stringify(config)) throw new McpConfigError(`you already have an MCP server named "${name}"`);
    file.mcpServers[name] = config;
  } else if (current !== undefined && JSON.stringify(current) === JSON.stringify(config)) {
    delete file.mcpServers[name];
  }
  return JSON.stringify(file, null, 2);
}

