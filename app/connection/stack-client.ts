// The app's handle on a stack worker: typed requests with ids, and the event stream.
import * as Comlink from 'comlink';
import type { ErrorShape } from '../../protocol/errors.ts';
import type { EventListener } from '../../protocol/events.ts';
import type { Method, ParamsOf, ResultOf, StackApi, StackRequest, StackResponse, StackSnapshot } from '../../protocol/stack-api.ts';
import { createTerminalFeed, type TerminalFeed } from './terminal-feed.ts';

export class StackCallError extends Error {
  constructor(readonly shape: ErrorShape) {
    super(shape.message);
    this.name = 'StackCallError';
  }
}

export interface StackClient {
  readonly stackId: string;
  /**
   * Resolves with the result, or rejects with a StackCallError carrying the worker's error.
   * `transfer`: buffers the worker takes over rather than a copy (the caller must not use them
   * again): a file of megabytes is not copied on the page's thread while the user types.
   */
  call<M extends Method>(method: M, params: ParamsOf<M>, transfer?: ArrayBuffer[]): Promise<ResultOf<M>>;
  snapshot(): Promise<StackSnapshot>;
  subscribe(afterSeq: number, listener: EventListener): Promise<{ last_seq: number }>;
  /** The computer's serial root shell: its output, keystrokes and size. */
  readonly terminal: TerminalLink;
  /** Stops the worker (e.g. when another tab took the stack over). */
  close(): void;
}

export interface TerminalLink extends TerminalFeed {
  /** Keystrokes (UTF-8) or binary input for the shell. */
  input(bytes: Uint8Array): Promise<void>;
  /** The view's size in characters; the worker passes it on once the computer is ready. */
  resize(cols: number, rows: number): Promise<void>;
}

export function connectStack(stackId: string): StackClient {
  const worker = new Worker(new URL('../../worker/stack-worker.ts', import.meta.url), {
    type: 'module',
    name: `stack:${stackId}`,
  });
  const api = Comlink.wrap<StackApi>(worker);
  const feed = createTerminalFeed((listener) => api.subscribeTerminal(Comlink.proxy(listener)));
  return {
    stackId,
    async call(method, params, transfer) {
      const request = { id: crypto.randomUUID(), method, params } as StackRequest;
      // comlink's Remote<> drops the method's generic, so the pairing is restored here.
      const response = (await api.request(transfer?.length ? Comlink.transfer(request, transfer) : request)) as StackResponse<typeof method>;
      if (response.request_id !== request.id) {
        throw new StackCallError({ code: 'internal', message: `Response for ${response.request_id} answered ${request.id}.` });
      }
      if (!response.ok) throw new StackCallError(response.error);
      return response.result;
    },
    snapshot: () => api.snapshot(),
    subscribe: (afterSeq, listener) => api.subscribe(afterSeq, Comlink.proxy(listener)),
    terminal: {
      listen: feed.listen,
      input: (bytes) => api.terminalInput(bytes),
      resize: (cols, rows) => api.terminalResize(cols, rows),
    },
    close: () => worker.terminate(),
  };
}
