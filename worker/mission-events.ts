// A mission's loop events as the stack's events: the agent's words and tool calls for the chat,
// and for the memory's hooks (never a recorded demo's).
import type { AgentMemory } from './agent-memory.ts';
import type { LoopEvent } from './agent/types.ts';
import { assertNever } from '../protocol/errors.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { MissionKind } from '../protocol/missions.ts';

const QUIET_HOOKS: Pick<AgentMemory['hooks'], 'agentText' | 'postToolUse'> = { agentText: () => ({ ok: true }), postToolUse: () => ({ ok: true }) };

/** Tells the page, and the memory, of one loop event of mission `mission_id`. */
export function forwardLoopEvent(emit: (event: StackEventBody) => void, memory: AgentMemory, mission_id: string, event: LoopEvent, kind: MissionKind) {
  // Recorded turns are not the agent's words nor the user's work: memory never hears of them.
  const hooks = kind === 'demo' ? QUIET_HOOKS : memory.hooks;
  switch (event.type) {
    case 'text_delta':
      hooks.agentText(event.text);
      return emit({ type: 'assistant_delta', mission_id, text: event.text });
    case 'message_end':
      return emit({ type: 'assistant_message_end', mission_id, stop_reason: event.stop_reason, usage: event.usage });
    case 'tool_started':
      return emit({ type: 'tool_started', mission_id, tool_use_id: event.tool_use_id, name: event.name, title: event.title, detail: toolDetail(event.input) });
    case 'tool_finished':
      hooks.postToolUse({ name: event.name, input: event.input, output: event.result.content, ok: !event.result.is_error });
      return emit({
        type: 'tool_finished',
        mission_id,
        tool_use_id: event.tool_use_id,
        name: event.name,
        ok: !event.result.is_error,
        summary: event.result.content.slice(0, 500),
        output: event.result.content.length > 500 ? event.result.content.slice(0, 16_000) : undefined,
      });
    case 'retry':
      return emit({ type: 'model_retry', mission_id, attempt: event.attempt, delay_ms: event.delay_ms, reason: event.reason });
    default:
      return assertNever(event, 'loop event');
  }
}

/** What a tool call was given, for the chat's expandable details: a command as itself, else JSON. */
function toolDetail(input: unknown): string {
  const record = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const text = typeof record.command === 'string' ? record.command : typeof record.python === 'string' ? record.python : JSON.stringify(input, null, 2) ?? '';
  return text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
}
