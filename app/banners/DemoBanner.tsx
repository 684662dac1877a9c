// The recorded demo's label, across the top of the app for as long as it plays and after: its
// replies were recorded, and nothing must let them pass for a model's.
import { useState } from 'preact/hooks';
import type { DemoState } from '../connection/events.ts';
import { PAGE_KIOSK } from '../kiosk/kiosk.ts';
import { useAppStore } from '../connection/store.ts';

const closedKey = (missionId: string) => `stackdocs:demo-banner-closed:${missionId}`;

export function DemoBanner() {
  const demo = useAppStore((state) => state.view.demo);
  const [closed, setClosed] = useState<string | null>(null);
  if (!demo || closed === demo.mission_id || localStorage.getItem(closedKey(demo.mission_id)) === '1') return null;
  const close = () => {
    localStorage.setItem(closedKey(demo.mission_id), '1');
    setClosed(demo.mission_id);
  };
  return (
    <div class="demo-banner" role="status" aria-label="Recorded demo" data-demo-state={demo.state}>
      <strong>Recorded demo — the replies are pre-recorded, not from a model.</strong>
      <span>{PAGE_KIOSK && demo.state === 'finished' ? 'The demo has finished. What it made is yours to explore.' : AFTER[demo.state]}</span>
      {demo.state !== 'playing' && (
        <button type="button" class="button" onClick={close}>
          Close
        </button>
      )}
    </div>
  );
}

const AFTER: Record<DemoState['state'], string> = {
  playing: 'Everything they do — reading the documents, the table, the computer, the export — runs for real, here.',
  finished: 'The demo has finished. What it made is yours to explore; connect a model in Settings to ask your own questions.',
  stopped: 'The demo was stopped. What it made so far stays in this stack.',
  failed: 'The demo stopped early (the chat says why). What it made so far stays in this stack.',
};
