// The VM worker's entry (a dedicated worker): exposes VmApi over comlink, owns the stack's
// machine files in OPFS and the one Machine running in this worker. The API is mounted from one
// module per concern (vm/api/), each given the shared context.
import * as Comlink from 'comlink';
import wasmUrl from 'v86/build/v86.wasm?url';
import { captureApi } from './api/capture.ts';
import { createVmContext, type VmWorkerDeps } from './api/context.ts';
import { execApi } from './api/exec.ts';
import { lifecycleApi } from './api/lifecycle.ts';
import { createMachineSetup } from './api/machine-setup.ts';
import { createNetworkNotices, networkApi } from './api/network-notices.ts';
import { createOfflineDownload } from './api/offline.ts';
import { createQuietTime } from './api/quiet-time.ts';
import { terminalApi } from './api/terminal.ts';
import type { VmApi } from './protocol.ts';

export type { VmWorkerDeps } from './api/context.ts';

/** Builds the VmApi; exported for tests, exposed by this module when run as a worker. */
export function createVmApi(deps: VmWorkerDeps): VmApi {
  const ctx = createVmContext(deps);
  const notices = createNetworkNotices(ctx);
  const quiet = createQuietTime(ctx, () => api.rest());
  const setup = createMachineSetup(ctx, notices, quiet);
  const offline = createOfflineDownload(ctx, setup);
  const api: VmApi = {
    ...lifecycleApi(ctx, setup, quiet, offline),
    ...offline.api,
    ...execApi(ctx, notices, quiet),
    ...captureApi(ctx),
    ...networkApi(notices),
    ...terminalApi(ctx, quiet),
  };
  return api;
}

declare const WorkerGlobalScope: unknown;
if (typeof WorkerGlobalScope !== 'undefined') {
  // What the worker's Content-Security-Policy refuses is said where the page's console shows it
  // (the browser's own report stays in the worker's, which tests and bug reports do not see).
  self.addEventListener('securitypolicyviolation', (event) => console.error(`Content Security Policy: the worker ${self.name || self.location.pathname} was refused ${event.effectiveDirective} ${event.blockedURI || '(inline)'}`));
  // Compiling v86 (~2 MB of wasm) starts now, beside the stack's setup, not on the wake's path.
  const wasmModule = WebAssembly.compileStreaming(fetch(wasmUrl));
  wasmModule.catch(() => {}); // reported, if ever, by the fallback in instantiateFrom
  Comlink.expose(createVmApi({ storageRoot: () => navigator.storage.getDirectory(), wasmModule }));
}
