// Checkpoints, from the timeline window: the list, "checkpoint now", and deleting one. Restoring
// one or opening it as a new stack needs the stack still: the stacks worker does those.
import { CheckpointError } from '../checkpoints/store.ts';
import type { Checkpoints } from '../checkpoints/checkpoints.ts';
import type { Handlers } from './context.ts';
import { RequestError } from '../request-error.ts';

export function checkpointHandlers(checkpoints: Checkpoints | null): Handlers<'list_checkpoints' | 'take_checkpoint' | 'delete_checkpoint'> {
  const kept = (): Checkpoints => {
    if (!checkpoints) throw new RequestError({ code: 'internal', message: 'This stack cannot keep checkpoints here.' });
    return checkpoints;
  };
  const refusal = (error: unknown): never => {
    if (error instanceof CheckpointError) throw new RequestError({ code: error.code === 'not_found' ? 'not_found' : 'storage', message: error.message });
    throw error;
  };
  return {
    list_checkpoints: () => kept().list(),
    take_checkpoint: (params) => kept().take('manual', params?.label?.trim() || 'Checkpoint now', params?.layout ?? undefined),
    delete_checkpoint: (params) => kept().remove(String(params?.checkpoint_id)).catch(refusal),
  };
}
