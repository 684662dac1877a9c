// The canvas windows the agent opened: their content, persisted in the stack's folder.
// Geometry (where a window sits, its size) belongs to the user and lives in the app.
import type { CanvasWindow, StackEventBody } from './protocol.ts';
import type { StackStorage } from './storage.ts';
import type { CanvasOperations, CreateWindowInput } from './tools/create-window.ts';

const FILE = 'canvas.json';

interface CanvasFile {
  version: 1;
  windows: CanvasWindow[];
}

export interface Canvas extends CanvasOperations {
  windows(): CanvasWindow[];
  /** Returns false when no such window is open. */
  closeWindow(windowId: string): Promise<boolean>;
}

export async function loadCanvas(
  storage: StackStorage,
  emit: (event: StackEventBody) => void,
  newId: () => string,
  now: () => number = Date.now,
): Promise<Canvas> {
  const stored = await storage.readJson<CanvasFile>(FILE);
  const windows = new Map<string, CanvasWindow>(
    stored?.version === 1 ? stored.windows.map((win) => [win.id, win]) : [],
  );
  const save = () => storage.writeJson(FILE, { version: 1, windows: [...windows.values()] } satisfies CanvasFile);

  return {
    windows: () => [...windows.values()],
    async openWindow(input: CreateWindowInput) {
      const at = now();
      const opened: CanvasWindow = { id: newId(), kind: input.kind, title: input.title, content: input.content, created_at: at, updated_at: at };
      windows.set(opened.id, opened);
      await save();
      emit({ type: 'window_opened', window: opened });
      return opened;
    },
    async closeWindow(windowId) {
      if (!windows.delete(windowId)) return false;
      await save();
      emit({ type: 'window_closed', window_id: windowId });
      return true;
    },
  };
}
