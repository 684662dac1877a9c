// What every tool call of a mission passes: the user's hooks before it, the permission gate, a
// checkpoint before the mission's first change; and the user's hooks after it.
import type { LoopOptions } from './agent/loop.ts';
import type { Hooks } from './hooks.ts';
import type { PermissionGate } from './permissions/gate.ts';
import type { MissionKind } from '../protocol/missions.ts';
import { READ_ONLY_TOOLS } from './subagents.ts';

/** Tools that only read (or only ask): no checkpoint is taken before them. */
const UNCHANGING_TOOLS = new Set<string>([...READ_ONLY_TOOLS, 'list_checkpoints']);

export interface MissionToolHooks {
  authorize: NonNullable<LoopOptions['authorize']>;
  afterTool: NonNullable<LoopOptions['afterTool']>;
}

export function missionToolHooks(options: {
  missionId: string;
  kind: MissionKind;
  text: string;
  /** A recorded demo: no checkpoint. */
  demo: boolean;
  /** The user's hooks; none for a demo. */
  hooks: Hooks | undefined;
  /** The stack's permission gate, and what it does before a mission's first change (MissionDeps). */
  stack: { gate: PermissionGate; beforeChange?(mission: { mission_id: string; kind: MissionKind; text: string }): Promise<void> };
  /** Hosts the user named: the gate lets the agent reach them. */
  userHosts: ReadonlySet<string>;
}): MissionToolHooks {
  const { missionId, kind, text, demo, hooks, stack } = options;
  let checkpointed: Promise<void> | undefined;
  return {
    async authorize(call, signal) {
      if (hooks?.any('PreToolUse', call.name)) {
        const verdict = await hooks.run('PreToolUse', { tool_name: call.name, tool_input: call.input }, { mission_id: missionId, tool_use_id: call.tool_use_id, tool_name: call.name }, signal);
        if (verdict.block !== null) return { allow: false, reason: `A hook blocked this call: ${verdict.block}` };
      }
      const verdict = await stack.gate.check({ mission_id: missionId, tool: call.name, title: call.title, input: call.input }, signal, options.userHosts);
      // The stack as it was before the mission's first change: a checkpoint, taken once.
      if (verdict.allow && !demo && stack.beforeChange && !UNCHANGING_TOOLS.has(call.name)) {
        checkpointed ??= stack.beforeChange({ mission_id: missionId, kind, text });
        await checkpointed;
      }
      return verdict;
    },
    async afterTool(call, result, signal) {
      if (!hooks?.any('PostToolUse', call.name)) return result;
      const verdict = await hooks.run(
        'PostToolUse',
        { tool_name: call.name, tool_input: call.input, tool_response: { content: result.content, is_error: result.is_error === true } },
        { mission_id: missionId, tool_use_id: call.tool_use_id, tool_name: call.name },
        signal,
      );
      return verdict.context ? { ...result, content: `${result.content}\n\nA hook after this call said: ${verdict.context}` } : result;
    },
  };
}
