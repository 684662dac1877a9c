// Failures as they cross to the stack worker: plain `VmError` data, each worded for the person
// at the computer (what is missing, why, what to do).
import { AgentError } from '../agent-client.ts';
import { ImageError, whyNotFetched } from '../image.ts';
import { MachineError } from '../machine-contract.ts';
import type { VmError, VmResult } from '../protocol.ts';

/** Runs a synchronous write to the machine's files, naming a full storage as such. */
export function guardStorage<T>(run: () => T): T {
  try {
    return run();
  } catch (cause) {
    if (cause instanceof Error && cause.name === 'QuotaExceededError') {
      throw new ImageError('quota', "the browser's storage is full: the computer's disk does not fit", { cause });
    }
    throw cause;
  }
}

/** Runs an operation, turning any failure into a plain VmError. Never rejects. */
export async function guard<T>(run: () => Promise<T>): Promise<VmResult<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    return { ok: false, error: toVmError(error) };
  }
}

export function toVmError(error: unknown): VmError {
  if (error instanceof ImageError && error.code === 'fetch_failed') {
    // Said without the file's address: what is missing, why, and what to do.
    return { code: 'image_fetch_failed', message: `part of its system image is not in this browser yet and could not be fetched (${whyNotFetched(error)}); connect to the internet and start it again`, retryable: true };
  }
  if (error instanceof ImageError) return { code: `image_${error.code}`, message: error.message, retryable: false };
  if (error instanceof MachineError) return { code: error.code, message: error.message, retryable: error.code !== 'not_running' };
  if (error instanceof AgentError) return { code: error.code, message: error.message, retryable: error.code === 'agent_restarted' };
  if (error instanceof Error && error.name === 'QuotaExceededError') return { code: 'image_quota', message: "the browser's storage is full", retryable: false };
  return { code: 'internal', message: error instanceof Error ? error.message : String(error) };
}
