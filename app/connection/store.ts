// UI state only: the view folded from the stack's events, the user's window layout, panels.
// Durable data (windows' content, settings) lives in the stack worker.
import { create } from 'zustand';
import { createJSONStorage, persist, type StateStorage } from 'zustand/middleware';
import type { StackEvent } from '../../protocol/events.ts';
import type { StackSnapshot } from '../../protocol/stack-api.ts';
import { applyEvents, emptyView, type StackView } from './events.ts';
import { emptyLayout, migrateLayout, placeNewWindows, pruneLayout, raise, type Geometry, type Layout, type Viewport } from '../canvas/layout.ts';

export type { Geometry } from '../canvas/layout.ts';

type Connection = { state: 'connecting' } | { state: 'ready' } | { state: 'failed'; message: string };

interface ViewSlice {
  view: StackView;
  connection: Connection;
  loadSnapshot(snapshot: StackSnapshot): void;
  receive(events: StackEvent[]): void;
  setConnection(connection: Connection): void;
}

/** The user owns geometry and stacking; the agent never moves a window. */
interface LayoutSlice extends Layout {
  setGeometry(windowId: string, geometry: Partial<Geometry>): void;
  /** Gives windows the user has not placed yet a free spot each, once. */
  placeNewWindows(windows: StackView['windows']): void;
  /** Brings a window to the front (a click in it, the subbar, the keyboard). */
  raise(windowId: string): void;
  toggleMaximised(windowId: string): void;
  setViewport(viewport: Viewport): void;
}

interface PanelSlice {
  settingsOpen: boolean;
  setSettingsOpen(open: boolean): void;
  /** The window the user last brought forward, and a counter that asks the canvas to pan to it. */
  focus: { windowId: string | null; request: number };
  /** Raises a window and pans the canvas to it (the subbar, the keyboard). */
  focusWindow(windowId: string): void;
}

export type AppState = ViewSlice & LayoutSlice & PanelSlice;

const LEGACY_KEY = 'stackdocs:layout';
let layoutStack: string | null = null;
let lastWritten: string | null = null;

/**
 * Each stack's layout under its own key, so two tabs on two stacks never overwrite each other.
 * Nothing is read or written until the page says which stack it shows (openLayout).
 */
const layoutStorage: StateStorage = {
  getItem: (name) => {
    if (!layoutStack) return null;
    // Before layouts were per stack, one key held every stack's (window ids never repeat, so the
    // old map still fits; other stacks' windows are pruned once this stack's snapshot arrives).
    return localStorage.getItem(`${name}:${layoutStack}`) ?? localStorage.getItem(LEGACY_KEY);
  },
  setItem: (name, value) => {
    // The store changes on every streamed event; the layout seldom does.
    if (!layoutStack || value === lastWritten) return;
    lastWritten = value;
    localStorage.setItem(`${name}:${layoutStack}`, value);
  },
  removeItem: (name) => {
    if (layoutStack) localStorage.removeItem(`${name}:${layoutStack}`);
  },
};

const layoutOf = (state: AppState): Layout => ({ geometry: state.geometry, order: state.order, maximised: state.maximised, viewport: state.viewport });

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
            trust: snapshot.trust,
            model: snapshot.model,
            computer: snapshot.computer,
            windows: snapshot.windows,
          },
          // Layout of windows closed meanwhile (or of other stacks, from the shared legacy key).
          ...pruneLayout(layoutOf(state), snapshot.windows.map((win) => win.id)),
        })),
      receive: (events) =>
        set((state) => {
          const view = applyEvents(state.view, events);
          const closed = events.some((event) => event.type === 'window_closed');
          return closed ? { view, ...pruneLayout(layoutOf(state), view.windows.map((win) => win.id)) } : { view };
        }),
      setConnection: (connection) => set({ connection }),

      ...emptyLayout,
      setGeometry: (windowId, patch) =>
        set((state) => {
          const current = state.geometry[windowId];
          if (!current) return {};
          return { geometry: { ...state.geometry, [windowId]: { ...current, ...patch } } };
        }),
      placeNewWindows: (windows) =>
        set((state) => {
          const next = placeNewWindows(layoutOf(state), windows);
          return next === layoutOf(state) ? {} : { geometry: next.geometry, order: next.order };
        }),
      raise: (windowId) =>
        set((state) => {
          const order = raise(state.order, windowId);
          return order === state.order && state.focus.windowId === windowId ? {} : { order, focus: { ...state.focus, windowId } };
        }),
      setViewport: (viewport) => set({ viewport }),
      toggleMaximised: (windowId) => set((state) => ({ maximised: state.maximised === windowId ? null : windowId, order: raise(state.order, windowId) })),

      settingsOpen: false,
      setSettingsOpen: (settingsOpen) => set({ settingsOpen }),
      focus: { windowId: null, request: 0 },
      focusWindow: (windowId) =>
        set((state) => ({
          focus: { windowId, request: state.focus.request + 1 },
          order: raise(state.order, windowId),
          // Showing another window restores the maximised one, so the asked-for one is seen.
          maximised: state.maximised === windowId ? state.maximised : null,
        })),
    }),
    {
      name: LEGACY_KEY,
      version: 2,
      storage: createJSONStorage(() => layoutStorage),
      // The stack is chosen by the page (openLayout), so the first read waits for it.
      skipHydration: true,
      // Only the user's layout is kept here; everything else comes back from the worker.
      partialize: (state): Layout => layoutOf(state),
      migrate: (persisted, version) => migrateLayout(persisted, version),
      // Whatever was stored is checked field by field, whichever version wrote it.
      merge: (persisted, current) => ({ ...current, ...migrateLayout(persisted, 2) }),
    },
  ),
);

/** Reads this stack's saved layout; call once, before the stack's windows arrive. */
export function openLayout(stackId: string): void {
  layoutStack = stackId;
  void useAppStore.persist.rehydrate();
}
