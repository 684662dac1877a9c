// The heartbeat: the agent's own check-in every few minutes, when the user turned it on. Each beat
// reads the stack's checklist (`.os/HEARTBEAT.md`, the user's to write) and either does what it
// asks or answers exactly HEARTBEAT_OK, which leaves no trace in the chat (app/connection/events.ts) nor in
// the model's conversation (missions.ts): only the transcript keeps it. No beat in the user's
// quiet hours, none behind a running mission, none while no model can answer (offline, with no
// local model).
import { HEARTBEAT_OK } from '../protocol/missions.ts';
import type { Settings } from '../protocol/settings.ts';

export { HEARTBEAT_OK } from '../protocol/missions.ts';
export const HEARTBEAT_FILE = '.os/HEARTBEAT.md';

const PROMPT =
  'This is a scheduled heartbeat, not a message from the user. Review pending actions and anything ' +
  'that needs doing now. If nothing does, reply with exactly HEARTBEAT_OK and do nothing else.';

/** The beat's message: the standing instruction and the user's checklist, read fresh each beat. */
export function heartbeatPrompt(checklist: string | undefined): string {
  const items = checklist?.trim();
  return items ? `${PROMPT}\n\nThe user's checklist for each heartbeat (${HEARTBEAT_FILE}):\n\n${items}` : PROMPT;
}

/** Whether the reply of a beat is the all-clear, and nothing else was done. */
export function isAllClear(text: string): boolean {
  return text.trim() === HEARTBEAT_OK;
}

const minutesOf = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));

/** Whether `now` (local time) is inside the quiet hours; they may run across midnight. */
export function inQuietHours(quiet: Settings['heartbeat_quiet'], now: Date): boolean {
  if (!quiet) return false;
  const minute = now.getHours() * 60 + now.getMinutes();
  const from = minutesOf(quiet.from);
  const to = minutesOf(quiet.to);
  return from < to ? minute >= from && minute < to : minute >= from || minute < to;
}

export interface HeartbeatDeps {
  settings(): Settings;
  /** The checklist's text; undefined when there is none. */
  checklist(): Promise<string | undefined>;
  /** A mission runs or waits: a beat would pile up behind it. */
  busy(): boolean;
  /** Whether a model can answer now (asked again when the last check said it could not). */
  modelReady(): Promise<boolean>;
  /** Starts the beat as a mission. */
  beat(prompt: string): void;
  now?(): Date;
}

export type BeatOutcome = 'beat' | 'off' | 'quiet' | 'busy' | 'no_model';

export interface Heartbeat {
  /** (Re)starts the timer for the current settings. */
  schedule(): void;
  stop(): void;
  /** One tick of the timer: beats unless a rule says not now; says which. */
  tick(): Promise<BeatOutcome>;
  /** The message a beat sends now (for "heartbeat now"). */
  prompt(): Promise<string>;
}

export function createHeartbeat(deps: HeartbeatDeps): Heartbeat {
  const now = deps.now ?? (() => new Date());
  let timer: ReturnType<typeof setInterval> | undefined;
  const prompt = async () => heartbeatPrompt(await deps.checklist().catch(() => undefined));

  async function tick(): Promise<BeatOutcome> {
    const settings = deps.settings();
    if (settings.heartbeat_minutes <= 0) return 'off';
    if (inQuietHours(settings.heartbeat_quiet, now())) return 'quiet';
    if (deps.busy()) return 'busy';
    if (!(await deps.modelReady().catch(() => false))) return 'no_model';
    // Read while the model was asked: a mission may have started meanwhile.
    const message = await prompt();
    if (deps.busy()) return 'busy';
    deps.beat(message);
    return 'beat';
  }

  return {
    schedule() {
      clearInterval(timer);
      timer = undefined;
      const minutes = deps.settings().heartbeat_minutes;
      if (minutes > 0) timer = setInterval(() => void tick(), minutes * 60_000);
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
    tick,
    prompt,
  };
}
