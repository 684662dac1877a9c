// The canvas: what the user does to windows (the agent hears of it), windows the user opens, a
// table exported as a file.
import { EXPORT_MIME, exportFileName, exportTable } from '../export/table-export.ts';
import type { Handlers, StackContext } from './context.ts';
import { RequestError } from '../request-error.ts';
import { isViewable } from './documents.ts';

const WINDOW_TITLES = { terminal: 'Terminal', tasks: 'Tasks', board: 'Task board', timeline: 'Timeline' } as const;

export function canvasHandlers(ctx: StackContext): Handlers<'canvas_interaction' | 'open_window' | 'export_window'> {
  const { canvas, computer, deps } = ctx;
  return {
    async canvas_interaction(params) {
      await canvas.interact(params);
      return {};
    },

    async open_window(params) {
      // An uploaded document the user asks to see (its window had not opened by itself): shown once.
      if (params?.kind === 'document') {
        const path = typeof params.path === 'string' ? params.path : '';
        const existing = canvas.windows().find((w) => w.kind === 'document' && w.path === path);
        if (existing) return existing;
        const record = (await deps.memory.documents.listDocuments(10_000)).find((doc) => doc.path === path);
        if (!record || !isViewable(record.mime)) throw new RequestError({ code: 'not_found', message: `There is no document to show at ${path || 'that path'}.` });
        const opened = await canvas.openWindow({ kind: 'document', title: record.filename, path: record.path, mime: record.mime });
        await canvas.interact({ type: 'window_opened_by_user', window_id: opened.id });
        return opened;
      }
      const kind = params?.kind === 'terminal' || params?.kind === 'tasks' || params?.kind === 'board' || params?.kind === 'timeline' ? params.kind : 'notes';
      const fallback = kind === 'notes' ? 'Untitled notes' : WINDOW_TITLES[kind];
      const title = params && 'title' in params && typeof params.title === 'string' && params.title.trim() ? params.title.trim().slice(0, 120) : fallback;
      if (kind !== 'notes') {
        // One of each is enough: the serial console is a single shell, the tasks and subagents one list each.
        const existing = canvas.windows().find((w) => w.kind === kind);
        if (existing) return existing;
        if (kind === 'terminal') void computer?.start();
      }
      const opened = await canvas.openWindow(kind === 'notes' ? { kind, title, content: '' } : { kind, title });
      await canvas.interact({ type: 'window_opened_by_user', window_id: opened.id });
      return opened;
    },

    async export_window(params) {
      const table = canvas.get(params.window_id);
      if (!table || table.kind !== 'table') throw new RequestError({ code: 'not_found', message: `No table window ${params.window_id}.` });
      const format = params.format;
      if (!(format in EXPORT_MIME)) throw new RequestError({ code: 'bad_request', message: 'The format must be csv, json or xlsx.' });
      return { filename: exportFileName(table.title, format), mime: EXPORT_MIME[format], bytes: await exportTable(table, format) };
    },
  };
}
