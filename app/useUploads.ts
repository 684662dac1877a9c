// Sends files the user drops, picks or pastes to the stack worker, one at a time, and keeps each
// refusal (too big, empty, not what its name says...) to show next to the composer.
import { useCallback, useState } from 'preact/hooks';
import { StackCallError, type StackClient } from './stack-client.ts';

export interface UploadState {
  busy: string | null;
  errors: string[];
  upload(files: Iterable<File>): Promise<void>;
  dismiss(): void;
}

export function useUploads(client: StackClient): UploadState {
  const [busy, setBusy] = useState<string | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const upload = useCallback(
    async (files: Iterable<File>) => {
      const failed: string[] = [];
      for (const file of files) {
        setBusy(file.name);
        try {
          // The File itself, a handle: the worker reads its bytes, not this thread, and refuses
          // one over the limit (or empty) before reading any.
          await client.call('upload_file', { name: file.name, bytes: file });
        } catch (error) {
          failed.push(error instanceof StackCallError ? error.message : `${file.name} could not be read.`);
        }
      }
      setBusy(null);
      setErrors(failed);
    },
    [client],
  );
  return { busy, errors, upload, dismiss: () => setErrors([]) };
}
