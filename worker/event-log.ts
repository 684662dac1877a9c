// The stack's event stream: every event gets the next seq; subscribers can resume after an offset.
import type { StackEvent, StackEventBody } from './protocol.ts';

export type EventBatchListener = (events: StackEvent[]) => void;

export interface EventLog {
  append(body: StackEventBody): StackEvent;
  /** Events with seq > afterSeq, oldest first. */
  since(afterSeq: number): StackEvent[];
  /** Batches are flushed once per microtask so a fast stream costs few messages. */
  subscribe(listener: EventBatchListener): () => void;
  readonly lastSeq: number;
}

export function createEventLog(now: () => number = Date.now): EventLog {
  const events: StackEvent[] = [];
  const listeners = new Set<EventBatchListener>();
  let pending: StackEvent[] = [];

  const flush = () => {
    const batch = pending;
    pending = [];
    for (const listener of listeners) {
      try {
        listener(batch);
      } catch {
        // A listener that went away (a closed tab's port) must not stop the others.
      }
    }
  };

  return {
    append(body) {
      const event = { ...body, seq: events.length + 1, at: now() } as StackEvent;
      events.push(event);
      if (pending.length === 0) queueMicrotask(flush);
      pending.push(event);
      return event;
    },
    since(afterSeq) {
      return events.slice(Math.max(0, afterSeq));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get lastSeq() {
      return events.length;
    },
  };
}
