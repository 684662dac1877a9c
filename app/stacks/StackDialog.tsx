// The stack menu's questions, as modal dialogs: a name for a new stack, a rename or a copy, and
// "Delete this stack?" naming it and its size.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { StackSummary } from '../../protocol/stacks-api.ts';
import { formatBytes } from '../../protocol/wording.ts';

export type StackDialogState = (
  | { kind: 'create' }
  | { kind: 'rename'; stack: StackSummary }
  | { kind: 'duplicate'; stack: StackSummary }
  | { kind: 'delete'; stack: StackSummary }
) & {
  busy: boolean;
  error: string | null;
  /** The open stack was closed for this and the work failed: the only way on is to open it again. */
  closed?: boolean;
};

const TEXT = {
  create: { title: 'New stack', submit: 'Create', busy: 'Creating…' },
  rename: { title: 'Rename stack', submit: 'Rename', busy: 'Renaming…' },
  duplicate: { title: 'Duplicate stack', submit: 'Duplicate', busy: 'Copying…' },
} as const;

export function StackDialog({ state, onCancel, onName, onDelete }: { state: StackDialogState; onCancel(): void; onName(name: string): void; onDelete(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [name, setName] = useState(() => (state.kind === 'rename' ? state.stack.name : state.kind === 'duplicate' ? `${state.stack.name} (copy)` : 'New stack'));

  useEffect(() => {
    if (!dialog.current?.open) dialog.current?.showModal();
  }, []);

  const error = state.error && (
    <p class="settings-error" role="alert">
      {state.error}
    </p>
  );
  const cancel = (
    <button type="button" class="button" onClick={onCancel} disabled={state.busy}>
      {state.closed ? 'Open it again' : 'Cancel'}
    </button>
  );

  if (state.kind === 'delete') {
    const { stack } = state;
    return (
      <dialog ref={dialog} class="settings stack-dialog" aria-labelledby="stack-dialog-title" onCancel={(event) => (state.busy ? event.preventDefault() : onCancel())}>
        <h2 id="stack-dialog-title">Delete “{stack.name}”?</h2>
        <p>
          This deletes the stack and everything in it ({formatBytes(stack.bytes)}): its documents, files, conversation, memory and computer. It cannot be
          undone.
        </p>
        {error}
        <div class="settings-actions">
          {cancel}
          <button type="button" class="button button--danger" onClick={onDelete} disabled={state.busy || state.closed}>
            {state.busy ? 'Deleting…' : 'Delete'}
          </button>
        </div>
      </dialog>
    );
  }

  const text = TEXT[state.kind];
  return (
    <dialog ref={dialog} class="settings stack-dialog" aria-labelledby="stack-dialog-title" onCancel={(event) => (state.busy ? event.preventDefault() : onCancel())}>
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          if (name.trim()) onName(name);
        }}
      >
        <h2 id="stack-dialog-title">{text.title}</h2>
        {state.kind === 'duplicate' && (
          <p>
            A copy of “{state.stack.name}” ({formatBytes(state.stack.bytes)}) with everything in it: documents, files, conversation, memory and
            computer. The copy opens here.
          </p>
        )}
        <label>
          Name
          <input name="name" required maxLength={60} value={name} disabled={state.busy || state.closed} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        {error}
        <div class="settings-actions">
          {cancel}
          <button type="submit" class="button button--primary" disabled={state.busy || state.closed || !name.trim()}>
            {state.busy ? text.busy : text.submit}
          </button>
        </div>
      </form>
    </dialog>
  );
}
