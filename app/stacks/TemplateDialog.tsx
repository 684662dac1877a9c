// Stack templates in the stack menu: "New stack from template…" (one the app ships, or a template
// file) and "Save as template…" (the open stack's makings — memory files, skills, settings, rules,
// hooks, windows — without its conversation, uploads, computer or secrets). The stacks worker
// packs and unpacks them (worker/stack-file/template.ts); the open stack stays open for both.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { TemplateInfo } from '../../protocol/stacks-api.ts';
import { formatBytes } from '../../protocol/wording.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { pickStackFile, saveFile } from '../common/save-bytes.ts';
import type { StackActions } from './stack-actions.ts';
import { fileName } from './StackFileDialog.tsx';

export type TemplateTask = { kind: 'new' } | { kind: 'save'; name: string };

export function TemplateDialog({ task, actions, onClose }: { task: TemplateTask; actions: StackActions; onClose(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const job = useRef(`job-${crypto.randomUUID()}`);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  useEffect(() => {
    if (!dialog.current?.open) dialog.current?.showModal();
  }, []);

  const attempt = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (failure) {
      setError(failure instanceof StackCallError || failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog ref={dialog} class="settings stack-dialog template-dialog" aria-labelledby="template-title" onCancel={(event) => (event.preventDefault(), busy ? undefined : onClose())}>
      {task.kind === 'new' ? (
        <NewFromTemplate busy={busy} onCancel={onClose} onCreate={(file, name, builtIn) => void attempt(async () => void (await actions.importFile(file, job.current, () => {}, { name, builtIn })))} onProblem={setError} />
      ) : (
        <SaveAsTemplate
          stackName={task.name}
          busy={busy}
          done={done}
          onCancel={onClose}
          onSave={(name, description) =>
            void attempt(async () => {
              // The picker first, inside the click: where the browser has none, the file is downloaded.
              const target = await pickStackFile(fileName(name), 'Stackdocs template');
              if (target === 'closed') return;
              const saved = await actions.saveTemplate({ name, description }, target, job.current);
              if (saved.file) saveFile(saved.file, fileName(name));
              setDone(`Saved the template “${saved.name}” (${formatBytes(saved.bytes)})${saved.file ? ': the browser is downloading it.' : '.'}`);
            })
          }
        />
      )}
      {error && (
        <p class="settings-error" role="alert">
          {error}
        </p>
      )}
    </dialog>
  );
}

function NewFromTemplate({ busy, onCancel, onCreate, onProblem }: { busy: boolean; onCancel(): void; onCreate(file: Blob, name: string, builtIn: boolean): void; onProblem(message: string): void }) {
  const [templates, setTemplates] = useState<TemplateInfo[] | null>(null);
  const [chosen, setChosen] = useState<TemplateInfo | null>(null);
  const [name, setName] = useState('');
  const picker = useRef<HTMLInputElement>(null);

  useEffect(() => {
    fetch(new URL('templates/index.json', document.baseURI))
      .then((response) => (response.ok ? (response.json() as Promise<TemplateInfo[]>) : Promise.reject(new Error(`HTTP ${response.status}`))))
      .then((list) => {
        setTemplates(list);
        setChosen(list[0] ?? null);
        setName(list[0]?.name ?? '');
      })
      .catch(() => onProblem('The templates could not be read from the app. Reload the page and try again.'));
  }, []);

  const create = async () => {
    if (!chosen || !name.trim()) return;
    const response = await fetch(new URL(chosen.file, document.baseURI)).catch(() => null);
    if (!response?.ok) return onProblem(`The template “${chosen.name}” could not be read from the app. Reload the page and try again.`);
    onCreate(await response.blob(), name.trim(), true);
  };

  return (
    <form
      method="dialog"
      onSubmit={(event) => {
        event.preventDefault();
        void create();
      }}
    >
      <h2 id="template-title">New stack from a template</h2>
      {templates === null ? (
        <p>Reading the templates…</p>
      ) : (
        <fieldset class="template-list" disabled={busy}>
          <legend>Template</legend>
          {templates.map((template) => (
            <label key={template.slug} class="template-choice">
              <input
                type="radio"
                name="template"
                checked={chosen?.slug === template.slug}
                onChange={() => {
                  if (!name.trim() || name === chosen?.name) setName(template.name);
                  setChosen(template);
                }}
              />
              <span>
                <strong>{template.name}</strong>
                <small>{template.description}</small>
              </span>
            </label>
          ))}
        </fieldset>
      )}
      <label>
        Name of the new stack
        <input name="name" required maxLength={60} value={name} onInput={(event) => setName(event.currentTarget.value)} disabled={busy} />
      </label>
      <p class="stack-menu-total">
        Or a template someone gave you:{' '}
        <button type="button" class="link-button" onClick={() => picker.current?.click()} disabled={busy}>
          open a template file…
        </button>
      </p>
      <input
        ref={picker}
        type="file"
        accept=".stack"
        hidden
        aria-label="Template file to open"
        onChange={(event) => {
          const file = event.currentTarget.files?.[0];
          event.currentTarget.value = '';
          if (file) onCreate(file, name.trim() || file.name.replace(/\.stack$/, ''), false);
        }}
      />
      <div class="settings-actions">
        <button type="button" class="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" class="button button--primary" disabled={busy || !chosen}>
          {busy ? 'Creating…' : 'Create'}
        </button>
      </div>
    </form>
  );
}

function SaveAsTemplate({ stackName, busy, done, onCancel, onSave }: { stackName: string; busy: boolean; done: string | null; onCancel(): void; onSave(name: string, description: string): void }) {
  const [name, setName] = useState(`${stackName} template`);
  const [description, setDescription] = useState('');
  return (
    <form
      method="dialog"
      onSubmit={(event) => {
        event.preventDefault();
        if (name.trim()) onSave(name.trim(), description.trim());
      }}
    >
      <h2 id="template-title">Save “{stackName}” as a template</h2>
      <p>
        A <code>.stack</code> file others (or you) can start new stacks from: this stack's memory files, skills, settings, permission rules, hooks,
        heartbeat checklist and windows (tables as they are now; document windows left out). Not in it: the conversation, documents and files, what the
        agent learned in its database, the computer, your API key or this browser's pairing. The memory files may say things about you: read them in
        Settings → Memory first.
      </p>
      <label>
        Template name
        <input name="template-name" required maxLength={60} value={name} onInput={(event) => setName(event.currentTarget.value)} disabled={busy} />
      </label>
      <label>
        What it is for
        <textarea name="template-description" rows={2} maxLength={500} value={description} onInput={(event) => setDescription(event.currentTarget.value)} disabled={busy} />
      </label>
      {done && <p role="status">{done}</p>}
      <div class="settings-actions">
        <button type="button" class="button" onClick={onCancel} disabled={busy}>
          {done ? 'Close' : 'Cancel'}
        </button>
        {!done && (
          <button type="submit" class="button button--primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save template'}
          </button>
        )}
      </div>
    </form>
  );
}
