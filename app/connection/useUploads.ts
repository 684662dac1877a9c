// Sends files the user drops, picks or pastes to the stack worker, one at a time, and keeps each
// refusal (too big, empty, not what its name says...) to show next to the composer. The progress
// lives in a store of its own that only the composer reads: a batch of files is a change per file,
// and each would otherwise redraw the whole app (its top bar, canvas and chat) while the user types.
import { useMemo } from 'preact/hooks';
import { useStore } from 'zustand';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { StackCallError, type StackClient } from './stack-client.ts';

export interface UploadProgress {
  /** The file being sent, if any. */
  busy: string | null;
  /** The last batch's refusals, each naming its file. */
  errors: string[];
}

export interface Uploader {
  upload(files: Iterable<File>): Promise<void>;
  readonly progress: StoreApi<UploadProgress>;
}

export function createUploader(client: StackClient): Uploader {
  const progress = createStore<UploadProgress>(() => ({ busy: null, errors: [] }));
  return {
    progress,
    async upload(files) {
      const failed: string[] = [];
      for (const file of files) {
        progress.setState({ busy: file.name });
        try {
          // The File itself, a handle: the worker reads its bytes, not this thread, and refuses
          // one over the limit (or empty) before reading any.
          await client.call('upload_file', { name: file.name, bytes: file });
        } catch (error) {
          failed.push(error instanceof StackCallError ? error.message : `${file.name} could not be read.`);
        }
      }
      progress.setState({ busy: null, errors: failed });
    },
  };
}

/** The stack's uploader, the same object for as long as the client is. */
export function useUploader(client: StackClient): Uploader {
  return useMemo(() => createUploader(client), [client]);
}

/** The upload progress, for the component that shows it (and only it redraws as files go). */
export function useUploadProgress(uploader: Uploader): UploadProgress {
  const busy = useStore(uploader.progress, (state) => state.busy);
  const errors = useStore(uploader.progress, (state) => state.errors);
  return { busy, errors };
}
