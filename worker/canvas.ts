// The canvas windows: their content (the agent's), persisted in the stack's system space, and the
// user's interactions with them, queued for the agent's next turn. Geometry (where a window sits,
// its size) belongs to the user and lives in the app.
import { assertNever } from '../protocol/errors.ts';
import type { StackEventBody } from '../protocol/events.ts';
import { applyWindowPatch, type CanvasInteraction, type CanvasWindow, type WindowPatch } from '../protocol/windows.ts';
import type { StackStorage } from '../storage/json-files.ts';
import { BadRequestError } from './request-error.ts';

const FILE = 'canvas.json';

interface CanvasFile {
  version: 1;
  windows: CanvasWindow[];
  /** What the user did that the agent has not heard yet: a reload must not lose it. */
  pending?: string[];
}

/** A window as the agent describes it: everything but the id and timestamps. */
export type NewWindow = CanvasWindow extends infer W
  ? W extends CanvasWindow
    ? Omit<W, 'id' | 'created_at' | 'updated_at'>
    : never
  : never;

export class CanvasError extends BadRequestError {}

export interface Canvas {
  windows(): CanvasWindow[];
  get(windowId: string): CanvasWindow | undefined;
  openWindow(window: NewWindow): Promise<CanvasWindow>;
  /** Throws CanvasError when the window is missing or the patch does not fit its kind. */
  patchWindow(windowId: string, patch: WindowPatch): Promise<CanvasWindow>;
  /** Returns false when no such window is open. */
  closeWindow(windowId: string): Promise<boolean>;
  /** Applies what the user did and remembers it for the agent. Throws CanvasError on a bad target. */
  interact(interaction: CanvasInteraction): Promise<void>;
  /** The user's actions since the last call, in words the model reads; clears them. */
  takeInteractionNotes(): string[];
  /** What is on the canvas, for the agent's context. */
  describe(): string;
}

export async function loadCanvas(
  storage: StackStorage,
  emit: (event: StackEventBody) => void,
  newId: () => string,
  now: () => number = Date.now,
): Promise<Canvas> {
  const stored = await storage.readJson<CanvasFile>(FILE);
  const windows = new Map<string, CanvasWindow>(stored?.version === 1 ? stored.windows.map((win) => [win.id, win]) : []);
  const notes: string[] = stored?.version === 1 && Array.isArray(stored.pending) ? stored.pending.filter((n) => typeof n === 'string') : [];
  // Writes are chained so a slow write never lands after a newer one.
  let saving: Promise<void> = Promise.resolve();
  const save = () => {
    const snapshot: CanvasFile = { version: 1, windows: [...windows.values()], pending: [...notes] };
    saving = saving.catch(() => {}).then(() => storage.writeJson(FILE, snapshot));
    return saving;
  };

  const require = (windowId: string): CanvasWindow => {
    const win = windows.get(windowId);
    if (!win) {
      const open = [...windows.values()].map((w) => `${w.id} (${w.kind} "${w.title}")`).join(', ');
      throw new CanvasError(`No window with id "${windowId}" is open. Open windows: ${open || 'none'}.`);
    }
    return win;
  };

  const patch = async (windowId: string, change: WindowPatch): Promise<CanvasWindow> => {
    const before = require(windowId);
    checkPatchFits(before, change);
    const at = now();
    const after = applyWindowPatch(before, change, at);
    windows.set(windowId, after);
    await save();
    emit({ type: 'window_patched', window_id: windowId, patch: change, updated_at: at });
    return after;
  };

  const close = async (windowId: string) => {
    if (!windows.delete(windowId)) return false;
    await save();
    emit({ type: 'window_closed', window_id: windowId });
    return true;
  };

  return {
    windows: () => [...windows.values()],
    get: (windowId) => windows.get(windowId),
    async openWindow(input) {
      const at = now();
      const opened = { ...input, id: newId(), created_at: at, updated_at: at } as CanvasWindow;
      windows.set(opened.id, opened);
      await save();
      emit({ type: 'window_opened', window: opened });
      return opened;
    },
    patchWindow: patch,
    closeWindow: close,
    async interact(interaction) {
      await applyInteraction(interaction);
      await save(); // the note for the agent is kept with the windows
    },
    takeInteractionNotes: () => {
      const taken = notes.splice(0);
      if (taken.length) void save();
      return taken;
    },
    describe() {
      if (windows.size === 0) return 'The canvas is empty.';
      return [...windows.values()].map(describeWindow).join('\n');
    },
  };

  async function applyInteraction(interaction: CanvasInteraction): Promise<void> {
      switch (interaction.type) {
        case 'window_closed': {
          const win = windows.get(interaction.window_id);
          if (await close(interaction.window_id)) notes.push(`The user closed the ${win!.kind} window "${win!.title}" (${win!.id}).`);
          return;
        }
        case 'window_opened_by_user': {
          const win = require(interaction.window_id);
          notes.push(
            win.kind === 'terminal'
              ? `The user opened a terminal window (${win.id}) on the computer.`
              : win.kind === 'tasks'
              ? `The user opened the Tasks window (${win.id}), which lists the scheduled tasks.`
              : win.kind === 'document'
              ? `The user opened the document ${win.path} in a window (${win.id}).`
              : win.kind === 'board'
              ? `The user opened the task board (${win.id}), which shows your subagents (the task tool).`
              : win.kind === 'timeline'
              ? `The user opened the timeline (${win.id}), which lists the stack's checkpoints (list_checkpoints).`
              : `The user opened a new ${win.kind} window "${win.title}" (${win.id}); it is empty until you fill it.`,
          );
          return;
        }
        case 'window_renamed': {
          const title = interaction.title.trim().slice(0, 120);
          if (!title) throw new CanvasError('A window title cannot be empty.');
          const before = require(interaction.window_id);
          await patch(interaction.window_id, { op: 'set', title });
          notes.push(`The user renamed window ${before.id} from "${before.title}" to "${title}".`);
          return;
        }
        case 'cell_edited': {
          const table = require(interaction.window_id);
          if (table.kind !== 'table') throw new CanvasError(`Window ${table.id} is not a table.`);
          const row = table.rows.find((r) => r.id === interaction.row_id);
          if (!row) throw new CanvasError(`Table ${table.id} has no row ${interaction.row_id}.`);
          const column = table.columns.find((c) => c.key === interaction.column);
          if (!column) throw new CanvasError(`Table ${table.id} has no column ${interaction.column}.`);
          const old = row.cells[column.key] ?? null;
          // The user's value is theirs: whatever OCR was unsure of, this cell is no longer marked.
          const { [column.key]: _cleared, ...uncertain } = row.uncertain ?? {};
          await patch(table.id, { op: 'upsert_rows', rows: [{ id: row.id, cells: { [column.key]: interaction.value }, ...(row.uncertain ? { uncertain } : {}) }] });
          notes.push(
            old === interaction.value
              ? `The user checked and confirmed the value of table "${table.title}" (${table.id}), row ${row.id}, column "${column.label}" (${column.key}): ${JSON.stringify(old)}; it is no longer marked uncertain.`
              : `The user edited table "${table.title}" (${table.id}), row ${row.id}, column "${column.label}" (${column.key}): ` +
                  `${JSON.stringify(old)} -> ${JSON.stringify(interaction.value)}.`,
          );
          return;
        }
        case 'notes_edited': {
          const win = require(interaction.window_id);
          if (win.kind !== 'notes') throw new CanvasError(`Window ${win.id} is not a notes window.`);
          if (typeof interaction.content !== 'string' || interaction.content.length > 1_000_000) throw new CanvasError('Notes must be text of at most 1,000,000 characters.');
          if (interaction.content === win.content) return;
          await patch(win.id, { op: 'set', content: interaction.content });
          // One note per window per turn: several saves while typing are one edit to the agent.
          const note = `The user edited the notes "${win.title}" (${win.id}); they now read:\n${clip(interaction.content, 4000)}`;
          const previous = notes.findIndex((n) => n.startsWith(`The user edited the notes "${win.title}" (${win.id})`));
          if (previous >= 0) notes.splice(previous, 1);
          notes.push(note);
          return;
        }
        default:
          return assertNever(interaction, 'canvas interaction');
      }
  }
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... ${text.length - max} more characters; read the window for the rest]`;
}

function describeWindow(win: CanvasWindow): string {
  switch (win.kind) {
    case 'notes':
      return `- ${win.id}: notes "${win.title}" (${win.content.length} characters)`;
    case 'table': {
      const unsure = win.rows.flatMap((row) => Object.entries(row.uncertain ?? {}).map(([key, confidence]) => `row ${row.id} ${key} ${JSON.stringify(row.cells[key] ?? null)} (${Math.round(confidence)}%)`));
      const marks = unsure.length ? `; OCR was unsure of ${unsure.length} cell${unsure.length === 1 ? '' : 's'}, marked for the user: ${unsure.slice(0, 20).join(', ')}` : '';
      return `- ${win.id}: table "${win.title}" with ${win.rows.length} rows; columns ${win.columns.map((c) => `${c.key} (${c.type})`).join(', ')}${marks}`;
    }
    case 'chart':
      return `- ${win.id}: ${win.chart} chart "${win.title}"${win.source.type === 'table' ? ` of table ${win.source.table_id}` : ''}`;
    case 'document':
      return `- ${win.id}: document "${win.title}" showing ${win.path}`;
    case 'terminal':
      return `- ${win.id}: terminal "${win.title}" (the computer's root shell, the user's to type in)`;
    case 'tasks':
      return `- ${win.id}: tasks "${win.title}" (the stack's scheduled tasks; schedule_task adds to it)`;
    case 'board':
      return `- ${win.id}: task board "${win.title}" (your subagents, running and finished; the task tool adds to it)`;
    case 'timeline':
      return `- ${win.id}: timeline "${win.title}" (the stack's checkpoints; only the user restores one)${win.proposed ? `, showing your proposal to restore ${win.proposed.checkpoint_id}` : ''}`;
    default:
      return assertNever(win, 'window');
  }
}

function checkPatchFits(win: CanvasWindow, patch: WindowPatch): void {
  if (patch.op === 'set') {
    const fields = Object.entries(patch).filter(([key, value]) => key !== 'op' && value !== undefined).map(([key]) => key);
    const allowed: Record<CanvasWindow['kind'], string[]> = {
      notes: ['title', 'content'],
      table: ['title'],
      chart: ['title', 'chart', 'source'],
      document: ['title', 'path', 'mime'],
      terminal: ['title'],
      tasks: ['title'],
      board: ['title'],
      timeline: ['title', 'proposed'],
    };
    const wrong = fields.filter((field) => !allowed[win.kind].includes(field));
    if (wrong.length) throw new CanvasError(`A ${win.kind} window has no ${wrong.join(', ')} to set.`);
    return;
  }
  if (win.kind !== 'table') throw new CanvasError(`Window ${win.id} is a ${win.kind} window; only tables have rows and columns.`);
}
