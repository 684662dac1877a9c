// Missions: the user's messages, the agent's heartbeats and scheduled tasks' runs, one at a time behind one lock.
// Each runs the agent loop with the stack's tools, memory and permission gate (mission-run.ts), and
// reports everything it does as events.
import { DEFAULT_POLICY } from './agent/compaction.ts';
import { runMission, type Mission, type MissionDeps, type MissionsContext } from './mission-run.ts';
import { StopReason } from './mission-stop.ts';
import type { ErrorShape } from '../protocol/errors.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { MissionKind, MissionStatus, MissionTask } from '../protocol/missions.ts';

export { MAX_STOP_HOOK_RETURNS, type MissionDeps } from './mission-run.ts';
export { budgetError } from './mission-stop.ts';

export interface MissionOptions {
  /** A scheduled task's run: named on the mission's events. */
  task?: MissionTask;
  /** Told how the mission ended. */
  onFinished?(outcome: { status: MissionStatus; error?: ErrorShape }): void;
}

export interface Missions {
  /** Queues a mission and returns its id at once. */
  start(requestId: string, text: string, kind?: MissionKind, options?: MissionOptions): string;
  /**
   * Stops the named mission, or every running and queued one. Returns whether any stopped. With a
   * reason, a stopped mission ends as failed with it (e.g. storage full) instead of "stopped".
   */
  abort(missionId?: string, reason?: ErrorShape): boolean;
  /** How many are running or waiting. */
  readonly active: number;
  /** The mission whose tools run now, for events they cause (e.g. a file to download). */
  readonly current: string | null;
  /** When the last mission ended (or these missions were created); now while one runs or waits. */
  readonly idleSince: number;
}

export function createMissions(deps: MissionDeps): Missions {
  const finishers = new Map<string, NonNullable<MissionOptions['onFinished']>>();
  const emit = (event: StackEventBody) => {
    deps.emit(event);
    if (event.type !== 'mission_finished') return;
    const finished = finishers.get(event.mission_id);
    finishers.delete(event.mission_id);
    finished?.({ status: event.status, ...(event.error ? { error: event.error } : {}) });
  };
  let idleSince = Date.now();
  const running = new Map<string, AbortController>();
  let lock: Promise<void> = Promise.resolve();
  let current: string | null = null;
  const ctx: MissionsContext = { deps, emit, policy: deps.compaction ?? DEFAULT_POLICY, userHosts: new Set() };

  async function run(mission: Mission) {
    const { id, requestId, kind, text, task } = mission;
    emit({ type: 'mission_started', mission_id: id, request_id: requestId, kind, text, ...(task ? { task } : {}) });
    current = id;
    try {
      await runMission(ctx, mission);
    } finally {
      running.delete(id);
      current = null;
      if (running.size === 0) idleSince = Date.now();
    }
  }

  return {
    start(requestId, text, kind = 'chat', options = {}) {
      const missionId = deps.newId('m');
      const controller = new AbortController();
      if (options.onFinished) finishers.set(missionId, options.onFinished);
      const task = options.task;
      emit({ type: 'mission_queued', mission_id: missionId, request_id: requestId, kind, text, position: running.size, ...(task ? { task } : {}) });
      running.set(missionId, controller);
      lock = lock.then(() => run({ id: missionId, requestId, text, kind, controller, task }));
      return missionId;
    },
    abort(missionId, reason) {
      let aborted = false;
      for (const [id, controller] of running) {
        if (missionId && id !== missionId) continue;
        if (!controller.signal.aborted) {
          controller.abort(reason ? new StopReason(reason) : undefined);
          aborted = true;
        }
      }
      return aborted;
    },
    get active() {
      return running.size;
    },
    get current() {
      return current;
    },
    get idleSince() {
      return running.size ? Date.now() : idleSince;
    },
  };
}
