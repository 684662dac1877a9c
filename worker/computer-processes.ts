// Programs run in the computer: `exec` for a command whose result is awaited (the bash tool,
// hooks), `service` for a long-lived one with stdin open (an MCP server).
import type { ExecRequest, VmExecResult } from '../vm/protocol.ts';
import { ComputerUnavailableError, type ComputerService } from './computer-api.ts';
import type { ComputerConnection } from './computer-connection.ts';

type OnOutput = (stream: 'stdout' | 'stderr', text: string) => void;

export function createComputerProcesses(connection: ComputerConnection) {
  const { deps } = connection;
  let count = 0;
  const newId = (prefix: string) => `${prefix}${++count}-${Math.random().toString(36).slice(2, 8)}`;

  return {
    async exec(request: ExecRequest, options?: { signal?: AbortSignal; onOutput?: OnOutput }): Promise<VmExecResult> {
      const target = await connection.running();
      const id = newId('x');
      const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
      const onOutput = options?.onOutput;
      const abort = () => void target.cancel(id);
      options?.signal?.addEventListener('abort', abort, { once: true });
      try {
        const result = await target.exec(
          id,
          request,
          onOutput ? deps.proxy((stream: 'stdout' | 'stderr', bytes: Uint8Array) => onOutput(stream, decoders[stream].decode(bytes, { stream: true }))) : undefined,
        );
        if (!result.ok) throw new ComputerUnavailableError(result.error.message);
        return result.value;
      } finally {
        options?.signal?.removeEventListener('abort', abort);
      }
    },
    async service(request: ExecRequest, options: { signal: AbortSignal; onOutput: OnOutput }): Promise<ComputerService> {
      const target = await connection.running();
      const id = newId('s');
      const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
      const abort = () => void target.cancel(id);
      options.signal.addEventListener('abort', abort, { once: true });
      const exited = target
        .exec(id, { ...request, stdin: 'pipe' }, deps.proxy((stream: 'stdout' | 'stderr', bytes: Uint8Array) => options.onOutput(stream, decoders[stream].decode(bytes, { stream: true }))), { background: true })
        .then(
          (result) => (result.ok ? { result: result.value } : { error: result.error.message }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
        )
        .finally(() => options.signal.removeEventListener('abort', abort));
      // Writes go in order: each waits for the one before it to reach the VM worker.
      let writing: Promise<void> = Promise.resolve();
      return {
        write(bytes, eof = false) {
          writing = writing.then(() => target.writeStdin(id, bytes, eof)).catch(() => {});
          return writing;
        },
        exited,
      };
    },
  };
}
