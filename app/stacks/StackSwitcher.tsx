// The stack menu in the header: every stack of this browser with its size; open, rename,
// duplicate and delete one, or make a new one. Each stack is a separate workspace with its own
// computer, memory and canvas.
import { useEffect, useRef, useState } from 'preact/hooks';
import { usePointerAway } from '../common/usePointerAway.ts';
import type { StackSummary, StacksReport } from '../../protocol/stacks-api.ts';
import { formatBytes } from '../../protocol/wording.ts';
import { persistence, type Persistence } from './persistence.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { StackClosedError, type StackActions } from './stack-actions.ts';
import { useAppStore } from '../connection/store.ts';
import { useStackActions } from './useStackActions.ts';
import { StackDialog, type StackDialogState } from './StackDialog.tsx';
import { StackFileDialog, type StackFileTask } from './StackFileDialog.tsx';
import { stacksClient } from './stacks-client.ts';
import { TemplateDialog, type TemplateTask } from './TemplateDialog.tsx';
import { keepStackList, listStacks, openStack } from './stacks.ts';

/** `stackFile`: a `.stack` file dropped onto the app, to open as a new stack; `onStackFileTaken` clears it. */
export function StackSwitcher({ current, stackFile = null, onStackFileTaken }: { current: string; stackFile?: File | null; onStackFileTaken?(): void }) {
  const [open, setOpen] = useState(false);
  const [report, setReport] = useState<StacksReport | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [dialog, setDialog] = useState<StackDialogState | null>(null);
  const [kept, setKept] = useState<Persistence | null>(null);
  const [fileTask, setFileTask] = useState<StackFileTask | null>(null);
  const [templateTask, setTemplateTask] = useState<TemplateTask | null>(null);
  const root = useRef<HTMLDivElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  const stacks: StackSummary[] = report?.stacks ?? listStacks().map((entry) => ({ ...entry, bytes: -1 }));
  const currentName = stacks.find((stack) => stack.id === current)?.name ?? current;

  const actions = useStackActions(current);

  const refresh = async () => {
    try {
      const next = await stacksClient().list(listStacks());
      // The stack open here is listed even before its worker laid its folder out.
      if (!next.stacks.some((stack) => stack.id === current)) next.stacks.push({ id: current, name: currentName, bytes: 0 });
      keepStackList(next.stacks);
      setReport(next);
      setListError(null);
    } catch (error) {
      setListError(error instanceof Error ? error.message : String(error));
    }
  };

  // A dropped `.stack` file opens as a new stack, unless another export or import is under way.
  useEffect(() => {
    if (!stackFile) return;
    if (!fileTask) setFileTask({ kind: 'import', file: stackFile });
    onStackFileTaken?.();
  }, [stackFile]);

  // Names and sizes as the stacks worker finds them, once the stack opens and whenever the menu
  // does. Not before: its worker and its walk of every stack's files would slow the opening down.
  const opened = useAppStore((state) => state.connection.state === 'ready');
  useEffect(() => {
    if (opened) void refresh();
  }, [opened]);
  useEffect(() => {
    if (!open) return;
    void refresh();
    void persistence().then(setKept);
  }, [open]);
  usePointerAway(open, root, () => setOpen(false));

  const close = () => {
    setOpen(false);
    toggle.current?.focus();
  };

  return (
    <div class="stack-menu" ref={root}>
      <button
        ref={toggle}
        type="button"
        class="stack-menu-toggle"
        aria-haspopup="dialog"
        aria-expanded={open}
        aria-controls="stack-menu-panel"
        aria-label={`Stack: ${currentName}`}
        onClick={() => setOpen(!open)}
      >
        {currentName} <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <section
          id="stack-menu-panel"
          class="stack-menu-panel"
          aria-label="Stacks"
          onKeyDown={(event) => {
            if (event.key === 'Escape') {
              // Only the menu closes; Escape elsewhere stops the agent.
              event.stopPropagation();
              close();
            }
          }}
        >
          <ul class="stack-list">
            {stacks.map((stack) => (
              <StackRow key={stack.id} stack={stack} current={current} canDelete={stacks.length > 1} ask={setDialog} />
            ))}
          </ul>
          {kept === 'best_effort' && (
            <p class="storage-note storage-note--warn stack-menu-note">The browser may clear stacks when this device runs short of storage (Settings → Storage).</p>
          )}
          {listError && (
            <p class="stack-menu-error" role="alert">
              The stacks could not be listed: {listError}
            </p>
          )}
          <StackMenuFooter
            currentName={currentName}
            report={report}
            ask={setDialog}
            startTemplate={(task) => (setOpen(false), setTemplateTask(task))}
            startFile={(task) => (setOpen(false), setFileTask(task))}
          />
        </section>
      )}
      {templateTask && <TemplateDialog task={templateTask} actions={actions} onClose={() => setTemplateTask(null)} />}
      {fileTask && <StackFileDialog task={fileTask} actions={actions} stacks={stacksClient()} onClose={() => setFileTask(null)} reopen={() => openStack(current)} />}
      {dialog && <StackQuestion dialog={dialog} setDialog={setDialog} current={current} stacks={stacks} actions={actions} refresh={refresh} />}
    </div>
  );
}

interface QuestionProps {
  dialog: StackDialogState;
  setDialog(dialog: StackDialogState | null): void;
  current: string;
  stacks: StackSummary[];
  actions: StackActions;
  refresh(): Promise<void>;
}

/** A new stack's name, a rename, a copy or a deletion: asked, then done, its failure shown in the dialog. */
function StackQuestion({ dialog, setDialog, current, stacks, actions, refresh }: QuestionProps) {
  const run = async (work: () => Promise<unknown>) => {
    setDialog({ ...dialog, busy: true, error: null });
    try {
      await work();
      setDialog(null);
      await refresh();
    } catch (error) {
      const message = error instanceof StackCallError || error instanceof Error ? error.message : String(error);
      setDialog({ ...dialog, busy: false, error: message, closed: error instanceof StackClosedError });
    }
  };
  return (
    <StackDialog
      state={dialog}
      onCancel={() => (dialog.closed ? openStack(current) : setDialog(null))}
      onName={(name) => {
        if (dialog.kind === 'create') void run(() => actions.create(name));
        else if (dialog.kind === 'rename') void run(() => actions.rename(dialog.stack.id, name));
        else if (dialog.kind === 'duplicate') void run(() => actions.duplicate(dialog.stack.id, name));
      }}
      onDelete={() => dialog.kind === 'delete' && void run(() => actions.remove(dialog.stack.id, stacks))}
    />
  );
}

/** One stack in the menu: open it, its size, and rename, duplicate or delete it (not the last one). */
function StackRow({ stack, current, canDelete, ask }: { stack: StackSummary; current: string; canDelete: boolean; ask(dialog: StackDialogState): void }) {
  return (
    <li class="stack-row" aria-label={stack.name}>
      <button type="button" class="stack-open" aria-current={stack.id === current ? 'true' : undefined} onClick={() => stack.id !== current && openStack(stack.id)}>
        {stack.name}
      </button>
      <span class="stack-size" data-testid="stack-size">
        {stack.bytes < 0 ? '…' : formatBytes(stack.bytes)}
      </span>
      <span class="stack-row-actions">
        <button type="button" class="stack-action" aria-label={`Rename ${stack.name}`} title="Rename" onClick={() => ask({ kind: 'rename', stack, busy: false, error: null })}>
          Rename
        </button>
        <button type="button" class="stack-action" aria-label={`Duplicate ${stack.name}`} title="Duplicate" onClick={() => ask({ kind: 'duplicate', stack, busy: false, error: null })}>
          Duplicate
        </button>
        <button
          type="button"
          class="stack-action stack-action--danger"
          aria-label={`Delete ${stack.name}`}
          title="Delete"
          disabled={!canDelete}
          onClick={() => ask({ kind: 'delete', stack, busy: false, error: null })}
        >
          Delete
        </button>
      </span>
    </li>
  );
}

interface FooterProps {
  currentName: string;
  report: StacksReport | null;
  ask(dialog: StackDialogState): void;
  /** Closes the menu and opens the template dialog. */
  startTemplate(task: TemplateTask): void;
  /** Closes the menu and opens the export or import dialog. */
  startFile(task: StackFileTask): void;
}

/** The menu's buttons for a new stack, templates and stack files, and what all stacks take. */
function StackMenuFooter({ currentName, report, ask, startTemplate, startFile }: FooterProps) {
  const picker = useRef<HTMLInputElement>(null);
  return (
    <div class="stack-menu-footer">
      <button type="button" class="button" onClick={() => ask({ kind: 'create', busy: false, error: null })}>
        New stack…
      </button>
      <button type="button" class="button" onClick={() => startTemplate({ kind: 'new' })}>
        New from template…
      </button>
      <button type="button" class="button" onClick={() => startFile({ kind: 'export', name: currentName })}>
        Export stack…
      </button>
      <button type="button" class="button" onClick={() => startTemplate({ kind: 'save', name: currentName })}>
        Save as template…
      </button>
      <button type="button" class="button" onClick={() => picker.current?.click()}>
        Open stack file…
      </button>
      <input
        ref={picker}
        type="file"
        accept=".stack"
        hidden
        aria-label="Stack file to open"
        onChange={(event) => {
          const file = event.currentTarget.files?.[0];
          event.currentTarget.value = '';
          if (file) startFile({ kind: 'import', file });
        }}
      />
      {report && <span class="stack-menu-total">{totalWords(report)}</span>}
    </div>
  );
}

/** "All stacks: 12 MB of this site's 1.2 GB · 3.4 GB free". */
export function totalWords(report: StacksReport): string {
  const stacks = report.stacks.reduce((sum, stack) => sum + Math.max(0, stack.bytes), 0);
  const parts = [`All stacks: ${formatBytes(stacks)}`];
  if (report.usage !== null && report.quota !== null) parts.push(`${formatBytes(Math.max(0, report.quota - report.usage))} free`);
  return parts.join(' · ');
}
