// A model's client loaded on its first call rather than while the stack opens: the Anthropic SDK
// is a fifth of the stack worker's code, and a reload is interactive only once that code is parsed.
import { ModelError } from './errors.ts';
import type { StreamFn } from './types.ts';

export function streamOnFirstCall(load: () => Promise<StreamFn>): StreamFn {
  let loading: Promise<StreamFn> | null = null;
  return async function* stream(request, signal) {
    let loaded: StreamFn;
    try {
      loaded = await (loading ??= load());
    } catch (error) {
      loading = null; // tried again on the next call
      const message = error instanceof Error ? error.message : String(error);
      throw new ModelError({ code: 'internal', message: `The model's client could not be loaded (${message}). Reload the app and try again.` });
    }
    yield* loaded(request, signal);
  };
}
