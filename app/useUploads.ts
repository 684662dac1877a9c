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

/** Above this the worker refuses anyway; checking here spares a round trip. */
const MAX_BYTES = 25 * 1024 * 1024;

export function useUploads(client: StackClient): UploadState {
  const [busy, setBusy] = useState<string | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const upload = useCallback(
    async (files: Iterable<File>) => {
      const failed: string[] = [];
      for (const file of files) {
        if (file.size > MAX_BYTES) {
          failed.push(`${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MB; the limit is 25 MB per file.`);
          continue;
        }
        setBusy(file.name);
        try {
          // The File itself, a handle: the worker reads its bytes, not this thread.
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
