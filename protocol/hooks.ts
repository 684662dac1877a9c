// Hooks: commands the user sets to run in the computer at points of the agent's work.

/** Before and after a tool call, when the user sends a message, when a mission is about to stop. */
export type HookEvent = 'PreToolUse' | 'PostToolUse' | 'UserPromptSubmit' | 'Stop';

/**
 * One hook's run. `blocked`: it exited 2; `failed`: another non-zero exit; `timed_out`: killed at
 * its time limit; `unavailable`: the computer could not run it; `cancelled`: the mission stopped.
 */
export interface HookRun {
  event: HookEvent;
  command: string;
  outcome: 'ok' | 'blocked' | 'failed' | 'timed_out' | 'unavailable' | 'cancelled';
  exit_code: number | null;
  duration_ms: number;
  /** Each at most 4,000 characters. */
  stdout: string;
  stderr: string;
}

/** The stack's hooks: the file as stored (pretty-printed), and each hook; `error` when the stored file is not valid (then none runs). */
export interface HooksInfo {
  text: string;
  error: string | null;
  hooks: { event: HookEvent; matcher?: string; command: string; timeout: number }[];
}
