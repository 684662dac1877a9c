// Says plainly when no model can answer, how to connect one, and offers the recorded demo
// instead (never while a model answers: the stack refuses it then too). A kiosk's visitor has no
// Settings: they are told to ask the staff.
import { useState } from 'preact/hooks';
import { PAGE_KIOSK } from '../kiosk/kiosk.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';
import type { Uploader } from '../connection/useUploads.ts';
import { addSampleDocuments } from './samples.ts';

export function ModelBanner({ uploader }: { uploader: Uploader }) {
  const model = useAppStore((state) => state.view.model);
  const openSettings = useAppStore((state) => state.setSettingsOpen);
  if (model.state === 'ready' || model.state === 'unknown') return null;
  return (
    <div class="model-banner" role="status" data-model-state={model.state}>
      <strong>{PAGE_KIOSK ? 'The assistant cannot answer right now' : model.state === 'not_configured' ? 'No model connected' : 'Model endpoint unreachable'}</strong>
      <p>{PAGE_KIOSK ? 'This kiosk cannot reach its model. Please let the staff know.' : model.message}</p>
      <div class="model-banner-actions">
        {!PAGE_KIOSK && (
          <button type="button" class="button" onClick={() => openSettings(true)}>
            Open settings
          </button>
        )}
        <PlayDemo uploader={uploader} />
      </div>
    </div>
  );
}

/** Adds the sample documents the stack lacks, then asks the stack to play the recording on them. */
function PlayDemo({ uploader }: { uploader: Uploader }) {
  const client = useStackClient();
  const documents = useAppStore((state) => state.view.documents);
  const playing = useAppStore((state) => state.view.demo?.state === 'playing');
  const busy = useAppStore((state) => state.view.activeMissions.length > 0);
  const [phase, setPhase] = useState<'idle' | 'adding' | 'starting'>('idle');
  const [error, setError] = useState<string | null>(null);
  const play = async () => {
    setError(null);
    try {
      setPhase('adding');
      await addSampleDocuments(uploader, (path) => path in documents);
      setPhase('starting');
      await client.call('play_demo', {});
    } catch (caught) {
      setError(caught instanceof StackCallError ? caught.message : 'The sample documents could not be loaded. Reload the page and try again.');
    } finally {
      setPhase('idle');
    }
  };
  const label = playing ? 'Playing the recorded demo…' : phase === 'adding' ? 'Adding the sample documents…' : phase === 'starting' ? 'Starting the demo…' : 'Play the recorded demo';
  return (
    <>
      <button type="button" class="button" disabled={phase !== 'idle' || busy} onClick={() => void play()} title="Pre-recorded replies on the sample documents; everything they do runs for real">
        {label}
      </button>
      {error && <p role="alert">{error}</p>}
    </>
  );
}
