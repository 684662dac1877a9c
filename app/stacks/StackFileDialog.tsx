// "Export stack…" and "Open stack file…": one `.stack` file out of the open stack, or a new stack
// out of one, with progress and cancel. The stacks worker does the work (stack-actions.ts).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ExportContents } from '../../protocol/stacks-api.ts';
import { formatBytes } from '../../protocol/wording.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { StackClosedError, type StackActions } from './stack-actions.ts';
import { pickStackFile, saveFile } from '../common/save-bytes.ts';
import type { StacksClient } from './stacks-client.ts';

export type StackFileTask = { kind: 'export'; name: string } | { kind: 'import'; file: File };

type Phase =
  | { step: 'ask' }
  | { step: 'working'; done: number; total: number }
  | { step: 'exported'; bytes: number; saved: 'picked' | 'downloaded' }
  | { step: 'failed'; message: string; closed: boolean; large?: boolean };

export function StackFileDialog({ task, actions, stacks, onClose, reopen }: { task: StackFileTask; actions: StackActions; stacks: StacksClient; onClose(): void; reopen(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const job = useRef(`job-${crypto.randomUUID()}`);
  const [phase, setPhase] = useState<Phase>(task.kind === 'export' ? { step: 'ask' } : { step: 'working', done: 0, total: task.file.size });
  const progress = (done: number, total: number) => setPhase({ step: 'working', done, total });
  const [includeImage, setIncludeImage] = useState(false);
  const [contents, setContents] = useState<ExportContents | { error: string } | null>(null);
  // Secrets go only when ticked, one by one: none is ticked at first.
  const [secrets, setSecrets] = useState<ReadonlySet<string>>(new Set());

  // The new stack opens when it is complete; until then nothing of it is listed. A file over the
  // size an import takes unasked is refused first, and taken only once the user says so.
  const startImport = (allowLarge: boolean) => {
    if (task.kind !== 'import') return;
    setPhase({ step: 'working', done: 0, total: task.file.size });
    actions.importFile(task.file, job.current, progress, { allowLarge }).catch((error: unknown) =>
      setPhase({ step: 'failed', message: messageOf(error), closed: false, large: error instanceof StackCallError && error.shape.code === 'too_large' }),
    );
  };

  useEffect(() => {
    if (!dialog.current?.open) dialog.current?.showModal();
    if (task.kind === 'export') {
      actions.exportContents().then(setContents, (error: unknown) => setContents({ error: messageOf(error) }));
    }
    startImport(false);
  }, []);

  const startExport = async () => {
    if (task.kind !== 'export') return;
    // The picker first, inside the click: where the browser has none, the file is downloaded.
    const target = await pickStackFile(fileName(task.name), 'Stackdocs stack');
    if (target === 'closed') return;
    setPhase({ step: 'working', done: 0, total: 0 });
    try {
      const done = await actions.exportCurrent(target, job.current, progress, { includeImage, includeSecrets: [...secrets] });
      if (done.file) saveFile(done.file, fileName(task.name));
      setPhase({ step: 'exported', bytes: done.bytes, saved: done.file ? 'downloaded' : 'picked' });
    } catch (error) {
      setPhase({ step: 'failed', message: messageOf(error), closed: error instanceof StackClosedError });
    }
  };

  const working = phase.step === 'working';
  const title = task.kind === 'export' ? `Export “${task.name}”` : `Open “${task.file.name}”`;
  const finish = () => (phase.step === 'exported' || (phase.step === 'failed' && phase.closed) ? reopen() : onClose());

  return (
    <dialog ref={dialog} class="settings stack-dialog" aria-labelledby="stack-file-title" onCancel={(event) => (event.preventDefault(), working ? undefined : finish())}>
      <h2 id="stack-file-title">{title}</h2>
      {phase.step === 'ask' && (
        <p>
          One <code>.stack</code> file with everything in this stack, listed below, and the window layout — never your API key or this browser's pairing. It
          opens as a new stack in another browser. The stack closes while it is written and opens again after.
        </p>
      )}
      {phase.step === 'ask' && <ExportList contents={contents} />}
      {phase.step === 'ask' && contents && 'secrets' in contents && contents.secrets.length > 0 && (
        <fieldset class="stack-export-secrets">
          <legend>Keys and tokens</legend>
          <p class="stack-menu-total">Left out unless you tick them: the stack that opens the file then says which values to fill in.</p>
          {contents.secrets.map((secret) => (
            <label class="stack-file-option" key={secret.id}>
              <input
                type="checkbox"
                checked={secrets.has(secret.id)}
                onChange={(event) => {
                  const next = new Set(secrets);
                  if (event.currentTarget.checked) next.add(secret.id);
                  else next.delete(secret.id);
                  setSecrets(next);
                }}
              />
              {secret.label}
            </label>
          ))}
        </fieldset>
      )}
      {phase.step === 'ask' && (
        <label class="stack-file-option">
          <input type="checkbox" checked={includeImage} onChange={(event) => setIncludeImage(event.currentTarget.checked)} />
          Include the system image (a few hundred MB more): the file then opens in a Stackdocs whose computer has another system image too.
        </label>
      )}
      {working && (
        <>
          <p>{task.kind === 'export' ? 'Writing the stack file…' : 'Checking and copying the stack…'}</p>
          <progress max={phase.total || 1} value={phase.done} aria-label={task.kind === 'export' ? 'Export progress' : 'Import progress'} />
          <p class="stack-menu-total">{phase.total ? `${formatBytes(phase.done)} of ${formatBytes(phase.total)}` : 'Saving the computer and copying the databases…'}</p>
        </>
      )}
      {phase.step === 'exported' && (
        <p role="status">
          Exported “{task.kind === 'export' ? task.name : ''}” ({formatBytes(phase.bytes)}){phase.saved === 'downloaded' ? ': the browser is downloading it.' : '.'}
        </p>
      )}
      {phase.step === 'failed' && (
        <p class="settings-error" role="alert">
          {phase.message}
        </p>
      )}
      <div class="settings-actions">
        {working ? (
          <button type="button" class="button" onClick={() => void stacks.cancel(job.current)}>
            Cancel
          </button>
        ) : phase.step === 'ask' ? (
          <>
            <button type="button" class="button" onClick={onClose}>
              Cancel
            </button>
            <button type="button" class="button button--primary" onClick={() => void startExport()}>
              Export
            </button>
          </>
        ) : phase.step === 'failed' && phase.large ? (
          <>
            <button type="button" class="button" onClick={finish}>
              Cancel
            </button>
            <button type="button" class="button button--primary" onClick={() => startImport(true)}>
              Import anyway
            </button>
          </>
        ) : (
          <button type="button" class="button" onClick={finish}>
            {phase.step === 'exported' || (phase.step === 'failed' && phase.closed) ? 'Open the stack again' : 'Close'}
          </button>
        )}
      </div>
    </dialog>
  );
}

/** What goes, part by part with its size, asked of the stacks worker while the dialog opens. */
function ExportList({ contents }: { contents: ExportContents | { error: string } | null }) {
  if (contents === null) return <p class="stack-menu-total">Listing what goes…</p>;
  if ('error' in contents) return <p class="settings-error">What goes could not be listed ({contents.error}); every key and token of the MCP servers is still left out.</p>;
  return (
    <ul class="stack-export-contents" aria-label="What the file holds">
      {contents.parts.map((part) => (
        <li key={part.label}>
          {part.label}
          <span class="stack-menu-total"> {part.bytes_known ? formatBytes(part.bytes) : part.bytes ? `${formatBytes(part.bytes)} and more` : 'size once written'}</span>
        </li>
      ))}
    </ul>
  );
}

function messageOf(error: unknown): string {
  return error instanceof StackCallError || error instanceof Error ? error.message : String(error);
}

/** "Receipts 2026.stack": the stack's name without characters file systems refuse. */
export function fileName(name: string): string {
  return `${name.replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ').trim() || 'stack'}.stack`;
}
