// A file the agent made (an export), offered as a download: the bytes come from the stack worker.
import { useState } from 'preact/hooks';
import type { ChatEntry } from '../connection/events.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { saveBytes } from '../common/save-bytes.ts';

type DownloadEntry = Extract<ChatEntry, { kind: 'download' }>;

export function DownloadLink({ entry }: { entry: DownloadEntry }) {
  const client = useStackClient();
  const [error, setError] = useState<string | null>(null);
  const name = entry.path.split('/').at(-1) ?? entry.path;
  const download = async () => {
    setError(null);
    try {
      const file = await client.call('read_file', { path: entry.path });
      saveBytes(file.bytes, name, file.mime);
    } catch (failure) {
      setError(failure instanceof StackCallError ? failure.message : 'The file could not be read.');
    }
  };
  return (
    <div class="download" data-role="download">
      <button type="button" class="button" onClick={() => void download()} aria-label={`Download ${name}`}>
        ⬇ {name}
      </button>
      <span class="download-size">{formatSize(entry.size)}</span>
      {error && <p role="alert">{error}</p>}
    </div>
  );
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
