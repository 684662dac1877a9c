// Pure layout logic for the canvas: where a new window goes, stacking order, and what of a saved
// layout still applies. The user owns geometry; nothing here is sent to the agent.
import type { WindowKind } from '../../protocol/windows.ts';

export interface Geometry {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The user's layout of one stack: what the app keeps across reloads. */
export interface Layout {
  geometry: Record<string, Geometry>;
  /** Window ids from back to front: the last one is drawn on top. */
  order: string[];
  /** The window filling the canvas, if any. */
  maximised: string | null;
  /** Where the user panned and zoomed to; null until they do. */
  viewport: Viewport | null;
}

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
}

export const emptyLayout: Layout = { geometry: {}, order: [], maximised: null, viewport: null };

/** Sizes that suit each kind's content on a laptop screen, next to the chat. */
export const DEFAULT_SIZE: Record<WindowKind, { width: number; height: number }> = {
  table: { width: 460, height: 300 },
  chart: { width: 420, height: 300 },
  notes: { width: 360, height: 240 },
  document: { width: 400, height: 440 },
  // 80 columns by 24 rows of 13px monospace, with the title bar.
  terminal: { width: 680, height: 460 },
  tasks: { width: 480, height: 400 },
  board: { width: 480, height: 420 },
  timeline: { width: 500, height: 440 },
};

const ORIGIN = 40;
const GAP = 24;
/** New windows fill a band this wide (two windows) before starting a new row. */
const BAND = 920;

/**
 * The first free spot for a new window, top to bottom then left to right, beside the windows
 * already placed (never on top of one). Candidates are the corners next to each placed window,
 * so the result packs tightly and is stable for the same input.
 */
export function placeWindow(kind: WindowKind, placed: Geometry[]): Geometry {
  const size = DEFAULT_SIZE[kind];
  const candidates: { x: number; y: number }[] = [{ x: ORIGIN, y: ORIGIN }];
  for (const rect of placed) {
    candidates.push({ x: rect.x + rect.width + GAP, y: rect.y }, { x: rect.x, y: rect.y + rect.height + GAP }, { x: ORIGIN, y: rect.y + rect.height + GAP });
  }
  candidates.sort((a, b) => a.y - b.y || a.x - b.x);
  for (const spot of candidates) {
    if (spot.x < ORIGIN || spot.y < ORIGIN) continue;
    if (spot.x > ORIGIN && spot.x + size.width > ORIGIN + BAND) continue;
    const rect = { ...spot, ...size };
    if (!placed.some((other) => overlaps(rect, other))) return rect;
  }
  // Below everything: always free.
  const bottom = placed.reduce((max, rect) => Math.max(max, rect.y + rect.height + GAP), ORIGIN);
  return { x: ORIGIN, y: bottom, ...size };
}

function overlaps(a: Geometry, b: Geometry): boolean {
  return a.x < b.x + b.width + GAP && b.x < a.x + a.width + GAP && a.y < b.y + b.height + GAP && b.y < a.y + a.height + GAP;
}

/** Places every window that has no geometry yet, in order, each beside the ones before it. */
export function placeNewWindows(layout: Layout, windows: { id: string; kind: WindowKind }[]): Layout {
  const missing = windows.filter((win) => !layout.geometry[win.id]);
  if (missing.length === 0) return layout;
  const geometry = { ...layout.geometry };
  const placed = windows.filter((win) => geometry[win.id]).map((win) => geometry[win.id]!);
  for (const win of missing) {
    const rect = placeWindow(win.kind, placed);
    geometry[win.id] = rect;
    placed.push(rect);
  }
  // A window that just opened comes to the front.
  const order = [...layout.order.filter((id) => !missing.some((win) => win.id === id)), ...missing.map((win) => win.id)];
  return { ...layout, geometry, order };
}

/** The order with `windowId` on top. Returns the same array when it already is. */
export function raise(order: string[], windowId: string): string[] {
  if (order.at(-1) === windowId) return order;
  return [...order.filter((id) => id !== windowId), windowId];
}

/** The layout without windows that are no longer open (their ids never come back). */
export function pruneLayout(layout: Layout, openIds: Iterable<string>): Layout {
  const open = new Set(openIds);
  const kept = Object.entries(layout.geometry).filter(([id]) => open.has(id));
  if (kept.length === Object.keys(layout.geometry).length && layout.order.every((id) => open.has(id)) && (!layout.maximised || open.has(layout.maximised))) {
    return layout;
  }
  return {
    ...layout,
    geometry: Object.fromEntries(kept),
    order: layout.order.filter((id) => open.has(id)),
    maximised: layout.maximised && open.has(layout.maximised) ? layout.maximised : null,
  };
}

/** What a saved layout of any earlier version becomes; anything unreadable starts empty. */
export function migrateLayout(saved: unknown, version: number): Layout {
  if (!saved || typeof saved !== 'object') return emptyLayout;
  const value = saved as Partial<Layout>;
  const geometry: Record<string, Geometry> = {};
  for (const [id, rect] of Object.entries(value.geometry ?? {})) {
    if (rect && numbers(rect.x, rect.y, rect.width, rect.height)) geometry[id] = { x: rect.x, y: rect.y, width: rect.width, height: rect.height };
  }
  // Version 1 kept only geometry, for every stack under one key.
  if (version < 2) return { ...emptyLayout, geometry };
  const order = Array.isArray(value.order) ? value.order.filter((id): id is string => typeof id === 'string') : [];
  const view = value.viewport;
  return {
    geometry,
    order,
    maximised: typeof value.maximised === 'string' ? value.maximised : null,
    viewport: view && numbers(view.x, view.y, view.zoom) && view.zoom > 0 ? { x: view.x, y: view.y, zoom: view.zoom } : null,
  };
}

function numbers(...values: unknown[]): boolean {
  return values.every((n) => typeof n === 'number' && Number.isFinite(n));
}
