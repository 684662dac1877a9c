// Canvas windows: the agent owns their content, the user their geometry (which lives in the app).
// A window changes by patches (`applyWindowPatch`, the one place a patch is applied), and what the
// user does on the canvas comes back as interactions.

import { assertNever } from './errors.ts';

export type WindowKind = CanvasWindow['kind'];

interface WindowBase {
  id: string;
  title: string;
  created_at: number;
  updated_at: number;
}

export interface NotesWindow extends WindowBase {
  kind: 'notes';
  /** Markdown. */
  content: string;
}

export type ColumnType = 'text' | 'number' | 'currency' | 'date' | 'boolean';

export type CellValue = string | number | boolean | null;

export interface TableColumn {
  /** The key of this column's values in each row's cells. */
  key: string;
  label: string;
  type: ColumnType;
  /** ISO 4217 code for currency columns, e.g. "EUR". */
  currency?: string;
}

export interface TableRow {
  /** Stable across edits and reloads; a cell edit names its row by it. */
  id: string;
  cells: Record<string, CellValue>;
  /**
   * Cells whose value came from words OCR was unsure of: column key -> confidence (0..100). A
   * patch that carries it replaces the row's; a cell the user edits loses its mark.
   */
  uncertain?: Record<string, number>;
}

export interface TableWindow extends WindowBase {
  kind: 'table';
  columns: TableColumn[];
  rows: TableRow[];
}

export type ChartType = 'bar' | 'line' | 'pie';

/** A chart draws either a table window's columns (and follows its edits) or its own numbers. */
export type ChartSource =
  | { type: 'table'; table_id: string; x: string; y: string[] }
  | { type: 'inline'; labels: string[]; series: { name: string; values: number[] }[] };

export interface ChartWindow extends WindowBase {
  kind: 'chart';
  chart: ChartType;
  source: ChartSource;
}

export interface DocumentWindow extends WindowBase {
  kind: 'document';
  /** Path in the stack's user space, e.g. `documents/invoice.pdf`. */
  path: string;
  mime: string;
}

/** The computer's serial root shell; its bytes stream through `StackApi.subscribeTerminal`. */
export interface TerminalWindow extends WindowBase {
  kind: 'terminal';
}

/** The stack's scheduled tasks; its list comes from `list_tasks` and `task_changed` events. */
export interface TasksWindow extends WindowBase {
  kind: 'tasks';
}

/** The stack's checkpoints, to restore or open as a new stack; its list comes from `list_checkpoints`. */
export interface TimelineWindow extends WindowBase {
  kind: 'timeline';
  /** A checkpoint the agent proposed to go back to, with its reason; only the user restores. */
  proposed?: { checkpoint_id: string; reason: string };
}

/** The subagents of this stack's missions, running and finished; its list comes from `subagent_*` events. */
export interface BoardWindow extends WindowBase {
  kind: 'board';
}

export type CanvasWindow = NotesWindow | TableWindow | ChartWindow | DocumentWindow | TerminalWindow | TasksWindow | BoardWindow | TimelineWindow;

/**
 * A change to one window. Tables change by rows, so a cell edit in a 10k-row table sends one row,
 * not the table. Applied the same way in the worker and the app (`applyWindowPatch`).
 */
export type WindowPatch =
  | { op: 'set'; title?: string; content?: string; chart?: ChartType; source?: ChartSource; path?: string; mime?: string; proposed?: { checkpoint_id: string; reason: string } }
  | { op: 'set_columns'; columns: TableColumn[] }
  | { op: 'upsert_rows'; rows: TableRow[] }
  | { op: 'delete_rows'; row_ids: string[] };

/** What the user did on the canvas; the agent hears of each in its next turn. */
export type CanvasInteraction =
  | { type: 'window_closed'; window_id: string }
  | { type: 'window_opened_by_user'; window_id: string }
  | { type: 'window_renamed'; window_id: string; title: string }
  | { type: 'cell_edited'; window_id: string; row_id: string; column: string; value: CellValue }
  /** The user changed a notes window's markdown (saved as they type, debounced). */
  | { type: 'notes_edited'; window_id: string; content: string };

/**
 * Applies a patch and returns the new window (the input is not changed). Returns the window as it
 * was when the patch does not fit its kind; validation happens before a patch is emitted.
 */
export function applyWindowPatch<W extends CanvasWindow>(win: W, patch: WindowPatch, updatedAt: number): W {
  switch (patch.op) {
    case 'set': {
      const { op: _op, ...fields } = patch;
      const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
      return { ...win, ...defined, updated_at: updatedAt };
    }
    case 'set_columns':
      return win.kind === 'table' ? { ...win, columns: patch.columns, updated_at: updatedAt } : win;
    case 'upsert_rows': {
      if (win.kind !== 'table') return win;
      const rows = [...win.rows];
      const index = new Map(rows.map((row, i) => [row.id, i]));
      for (const row of patch.rows) {
        const at = index.get(row.id);
        if (at === undefined) {
          index.set(row.id, rows.length);
          rows.push(row);
        } else {
          const before = rows[at]!;
          const uncertain = row.uncertain ?? before.uncertain;
          rows[at] = { id: row.id, cells: { ...before.cells, ...row.cells }, ...(uncertain && Object.keys(uncertain).length ? { uncertain } : {}) };
        }
      }
      return { ...win, rows, updated_at: updatedAt };
    }
    case 'delete_rows': {
      if (win.kind !== 'table') return win;
      const gone = new Set(patch.row_ids);
      return { ...win, rows: win.rows.filter((row) => !gone.has(row.id)), updated_at: updatedAt };
    }
    default:
      return assertNever(patch, 'window patch');
  }
}
