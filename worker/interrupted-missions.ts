// Missions the page left unfinished, closed when the stack opens again.
import type { StackEventBody } from '../protocol/events.ts';
import { emptyUsage } from './agent/pricing.ts';
import type { EventLog } from './event-log.ts';

/**
 * Missions that were queued or running when the page went away never finished: they are closed
 * now as interrupted, so the chat shows what they did and that they stopped.
 */
export async function closeInterruptedMissions(log: EventLog, emit: (event: StackEventBody) => void) {
  const recent = await log.since(Math.max(0, log.lastSeq - 20_000), 20_000);
  const open = new Set<string>();
  for (const event of recent) {
    if (event.type === 'mission_queued') open.add(event.mission_id);
    if (event.type === 'mission_finished') open.delete(event.mission_id);
  }
  for (const missionId of open) {
    emit({
      type: 'mission_finished',
      mission_id: missionId,
      status: 'interrupted',
      usage: emptyUsage(),
      error: { code: 'interrupted', message: 'Interrupted: the page was closed or reloaded before this finished. What it did is above; ask again to continue.' },
    });
  }
}
