// UI state only: the view folded from the stack's events, window geometry, panels.
// Durable data (windows' content, settings) lives in the stack worker.
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import type { StackEvent, StackSnapshot } from '../worker/protocol.ts';
import { applyEvents, emptyView, type StackView } from './events.ts';

export interface Geometry {
  x: number;
  y: number;
  width: number;
  height: number;
}

type Connection = { state: 'connecting' } | { state: 'ready' } | { state: 'failed'; message: string };

interface ViewSlice {
  view: StackView;
  connection: Connection;
  loadSnapshot(snapshot: StackSnapshot): void;
  receive(events: StackEvent[]): void;
  setConnection(connection: Connection): void;
}

interface LayoutSlice {
  /** Where the user put each window. The user owns geometry; the agent never moves a window. */
  geometry: Record<string, Geometry>;
  setGeometry(windowId: string, geometry: Partial<Geometry>): void;
  forgetGeometry(windowId: string): void;
}

interface PanelSlice {
  settingsOpen: boolean;
  setSettingsOpen(open: boolean): void;
  /** The window brought to the front (from the subbar or the keyboard), and a counter to re-pan. */
  focus: { windowId: string | null; request: number };
  focusWindow(windowId: string): void;
  /** The window filling the canvas, if any. UI state only: a reload shows the layout again. */
  maximised: string | null;
  toggleMaximised(windowId: string): void;
}

export type AppState = ViewSlice & LayoutSlice & PanelSlice;

export const DEFAULT_WINDOW_SIZE = { width: 420, height: 320 };

export const useAppStore = create<AppState>()(
  persist(
    (set) => ({
      view: emptyView,
      connection: { state: 'connecting' },
      loadSnapshot: (snapshot) =>
        set((state) => ({
          view: {
            ...state.view,
            snapshotSeq: snapshot.last_seq,
            settings: snapshot.settings,
            model: snapshot.model,
            windows: snapshot.windows,
          },
        })),
      receive: (events) => set((state) => ({ view: applyEvents(state.view, events) })),
      setConnection: (connection) => set({ connection }),

      geometry: {},
      setGeometry: (windowId, patch) =>
        set((state) => {
          const current = state.geometry[windowId] ?? { x: 0, y: 0, ...DEFAULT_WINDOW_SIZE };
          return { geometry: { ...state.geometry, [windowId]: { ...current, ...patch } } };
        }),
      forgetGeometry: (windowId) =>
        set((state) => {
          const { [windowId]: _gone, ...rest } = state.geometry;
          return { geometry: rest };
        }),

      settingsOpen: false,
      setSettingsOpen: (settingsOpen) => set({ settingsOpen }),
      focus: { windowId: null, request: 0 },
      focusWindow: (windowId) => set((state) => ({ focus: { windowId, request: state.focus.request + 1 } })),
      maximised: null,
      toggleMaximised: (windowId) => set((state) => ({ maximised: state.maximised === windowId ? null : windowId })),
    }),
    {
      // Window ids are unique across stacks, so one layout map serves them all.
      name: 'stackdocs:layout',
      version: 1,
      storage: createJSONStorage(() => localStorage),
      // Only the user's layout is kept here; everything else comes back from the worker.
      partialize: (state) => ({ geometry: state.geometry }),
      migrate: (persisted) => persisted as { geometry: Record<string, Geometry> },
    },
  ),
);

const GAP = 24;
// Two fit beside the chat on a laptop screen.
const PER_ROW = 2;

/** Where the n-th window goes when the user has not placed it: a grid, so none hides another. */
export function placeNewWindow(index: number): Geometry {
  const column = index % PER_ROW;
  const row = Math.floor(index / PER_ROW);
  return {
    x: 40 + column * (DEFAULT_WINDOW_SIZE.width + GAP),
    y: 40 + row * (DEFAULT_WINDOW_SIZE.height + GAP),
    ...DEFAULT_WINDOW_SIZE,
  };
}
