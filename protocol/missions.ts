// Missions (a chat message, a heartbeat, a scheduled run, the demo), their spend, and the subagents
// they start.

/** `interrupted`: the page went away while it ran; closed when the stack opened again. */
export type MissionStatus = 'completed' | 'failed' | 'aborted' | 'interrupted';

/**
 * A chat message from the user, the agent's own periodic check-in, or the recorded demo (its
 * replies pre-recorded, never from a model; it never enters the model's conversation or memory).
 */
export type MissionKind = 'chat' | 'heartbeat' | 'demo' | 'scheduled';

/** A scheduled task's run, on its mission's events: which task, which try, and whether it was missed. */
export interface MissionTask {
  id: string;
  title: string;
  attempt: number;
  of: number;
  /** Due while the app was closed; run when it opened. */
  missed: boolean;
}

/**
 * A subagent: the `task` tool's helper with its own context, a prompt and a few tools, working for
 * a mission. `waiting`: for a free place (a few run at once). `activity`: what it does now, in
 * words. `usage`: its model calls so far (the mission's own usage includes it once it ends).
 */
export interface SubagentInfo {
  id: string;
  mission_id: string;
  tool_use_id: string;
  description: string;
  prompt: string;
  tools: string[];
  status: 'waiting' | 'running' | 'completed' | 'failed' | 'cancelled';
  activity: string;
  usage: Usage;
  tool_calls: number;
  started_at: number;
  finished_at: number | null;
  /** Its answer to the mission (the start of it), once completed. */
  result: string | null;
  /** Why it failed or stopped. */
  error: string | null;
}

/** One step of a subagent's transcript: what it said, or a tool call (reported when it starts and again when it ends). */
export type SubagentStep =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; tool_use_id: string; name: string; title: string; status: 'running' | 'ok' | 'error'; summary: string };

/** A heartbeat's whole answer when nothing needs doing: it leaves no trace in the chat. */
export const HEARTBEAT_OK = 'HEARTBEAT_OK';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** US dollars; null when the model's price is unknown (e.g. a local model). */
  cost_usd: number | null;
}

/** All the tokens a usage counts (input, output and cache): what the chat shows and a budget limits. */
export function tokensOf(usage: Usage): number {
  return usage.input_tokens + usage.output_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}
