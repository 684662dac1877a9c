// The serial shell's output on the app's side: one subscription to the worker (which cannot take
// a listener back), shared by whichever terminal views are open, and the recent output kept so a
// terminal window closed and opened again shows the screen it had instead of a blank one.

export type TerminalListener = (bytes: Uint8Array) => void;

export interface TerminalFeed {
  /**
   * Replays the kept recent output to `listener`, then gives it each new chunk. Resolves with the
   * function that stops it; rejects when the worker refused the subscription (a later call tries
   * again).
   */
  listen(listener: TerminalListener): Promise<() => void>;
}

/** How much recent output is kept for a view that opens later. */
export const REPLAY_BYTES = 256 * 1024;

/** `subscribe` reaches the worker; it is called once, on the first listen. */
export function createTerminalFeed(subscribe: (listener: TerminalListener) => Promise<void>, replayBytes = REPLAY_BYTES): TerminalFeed {
  const listeners = new Set<TerminalListener>();
  let kept: Uint8Array[] = [];
  let keptBytes = 0;
  let subscribed: Promise<void> | null = null;

  const receive = (bytes: Uint8Array) => {
    kept.push(bytes);
    keptBytes += bytes.length;
    while (keptBytes - kept[0]!.length >= replayBytes) keptBytes -= kept.shift()!.length;
    for (const listener of listeners) listener(bytes);
  };

  return {
    async listen(listener) {
      subscribed ??= subscribe(receive).catch((error: unknown) => {
        subscribed = null;
        throw error;
      });
      await subscribed;
      if (keptBytes > 0) {
        // One write: a terminal redraws once instead of once per chunk.
        const replay = concat(kept, keptBytes);
        kept = [replay];
        listener(replay);
      }
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
