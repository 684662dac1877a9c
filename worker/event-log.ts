// The stack's event stream: every event gets the next seq, is persisted, and subscribers can
// resume after an offset — across reloads too, since numbering continues from the stored log.
import type { StackEvent, StackEventBody } from '../protocol/events.ts';

export type EventBatchListener = (events: StackEvent[]) => void;

/** Where events are kept beyond this worker's life (transcript.db's events table). */
export interface EventStore {
  appendEvents(events: readonly StackEvent[]): Promise<void>;
  eventsSince(afterSeq: number, limit?: number): Promise<StackEvent[]>;
  lastEventSeq(): Promise<number>;
}

export interface EventLog {
  append(body: StackEventBody): StackEvent;
  /** Events with seq > afterSeq, oldest first (at most `limit`), from memory or the store. */
  since(afterSeq: number, limit?: number): Promise<StackEvent[]>;
  /** Batches are flushed once per microtask so a fast stream costs few messages and writes. */
  subscribe(listener: EventBatchListener): () => void;
  readonly lastSeq: number;
  /** Resolves when everything appended so far is stored. Never rejects. */
  flushed(): Promise<void>;
  /** Batches that could not be stored so far, and why the last one could not. */
  readonly storeFailures: number;
  readonly lastStoreError: unknown;
}

export interface EventLogOptions {
  store?: EventStore;
  now?: () => number;
  /** Called when storing a batch failed; the events stay in memory for this session. */
  onStoreError?: (error: unknown) => void;
}

/** Opens the log, continuing the numbering of the stored events. */
export async function openEventLog(options: EventLogOptions = {}): Promise<EventLog> {
  const { store, now = Date.now } = options;
  const firstSeq = (store ? await store.lastEventSeq() : 0) + 1;
  const events: StackEvent[] = []; // this session's, starting at firstSeq
  const listeners = new Set<EventBatchListener>();
  let pending: StackEvent[] = [];
  let storing: Promise<void> = Promise.resolve();
  let storeFailures = 0;
  let lastStoreError: unknown = null;

  const deliver = (batch: StackEvent[]) => {
    for (const listener of listeners) {
      try {
        listener(batch);
      } catch {
        // A listener that went away (a closed tab's port) must not stop the others.
      }
    }
  };
  // A batch reaches subscribers only once it is stored: what the user has seen (their message in
  // the chat, "Added invoice.pdf") survives a killed tab. A failed write still delivers: the
  // events then live in memory for this session, as onStoreError says.
  const flush = () => {
    const batch = pending;
    pending = [];
    if (!store) return deliver(batch);
    storing = storing
      .then(() => store.appendEvents(batch))
      .catch((error) => {
        storeFailures++;
        lastStoreError = error;
        try {
          options.onStoreError?.(error);
        } catch {
          // The listener's own failure must not stop delivery.
        }
      })
      .then(() => deliver(batch));
  };

  return {
    append(body) {
      const event = { ...body, seq: firstSeq + events.length, at: now() } as StackEvent;
      events.push(event);
      if (pending.length === 0) queueMicrotask(flush);
      pending.push(event);
      return event;
    },
    async since(afterSeq, limit = 10_000) {
      const fromMemory = events.slice(Math.max(0, afterSeq + 1 - firstSeq));
      if (afterSeq + 1 >= firstSeq || !store) return fromMemory.slice(0, limit);
      const older = (await store.eventsSince(afterSeq, limit)).filter((event) => event.seq < firstSeq);
      return [...older, ...fromMemory].slice(0, limit);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get lastSeq() {
      return firstSeq + events.length - 1;
    },
    get storeFailures() {
      return storeFailures;
    },
    get lastStoreError() {
      return lastStoreError;
    },
    async flushed() {
      await Promise.resolve(); // lets an append in this tick reach the store first
      await storing;
    },
  };
}
