// Canvas windows as xyflow nodes: a typed union by kind, and how the store's windows and the
// user's layout become nodes (reusing what did not change, so memoised windows do not redraw).
import type { Node } from '@xyflow/react';
import type { BoardWindow, CanvasWindow, ChartWindow, DocumentWindow, NotesWindow, TableWindow, TasksWindow, TerminalWindow, TimelineWindow } from '../../protocol/windows.ts';
import type { Geometry, Layout } from './layout.ts';

export type NotesWindowNodeType = Node<{ window: NotesWindow }, 'notes'>;
export type TableWindowNodeType = Node<{ window: TableWindow }, 'table'>;
export type ChartWindowNodeType = Node<{ window: ChartWindow }, 'chart'>;
export type DocumentWindowNodeType = Node<{ window: DocumentWindow }, 'document'>;
export type TerminalWindowNodeType = Node<{ window: TerminalWindow }, 'terminal'>;
export type TasksWindowNodeType = Node<{ window: TasksWindow }, 'tasks'>;
export type BoardWindowNodeType = Node<{ window: BoardWindow }, 'board'>;
export type TimelineWindowNodeType = Node<{ window: TimelineWindow }, 'timeline'>;
export type WindowNode = NotesWindowNodeType | TableWindowNodeType | ChartWindowNodeType | DocumentWindowNodeType | TerminalWindowNodeType | TasksWindowNodeType | BoardWindowNodeType | TimelineWindowNodeType;

/** Above every window the user stacked. */
const MAXIMISED_Z = 100_000;

/**
 * The nodes for `windows`, placed by `layout`; `cover` is the visible canvas, which a maximised
 * window fills. A node being dragged keeps its live position.
 */
export function buildNodes(windows: CanvasWindow[], layout: Pick<Layout, 'geometry' | 'order' | 'maximised'>, previous: WindowNode[], cover: Geometry | null): WindowNode[] {
  const before = new Map(previous.map((node) => [node.id, node]));
  const nodes: WindowNode[] = [];
  for (const window of windows) {
    const saved = layout.geometry[window.id];
    // Not placed yet: the store places it in a moment; until then it is not drawn.
    if (!saved) continue;
    const full = window.id === layout.maximised && cover !== null;
    const place = full ? cover : saved;
    const old = before.get(window.id);
    const data = old && old.data.window === window ? old.data : { window };
    nodes.push({
      ...old,
      id: window.id,
      type: window.kind,
      position: old?.dragging ? old.position : { x: place.x, y: place.y },
      width: place.width,
      height: place.height,
      dragHandle: '.window-titlebar',
      draggable: !full,
      zIndex: full ? MAXIMISED_Z : layout.order.indexOf(window.id) + 1,
      data,
    } as WindowNode);
  }
  return nodes;
}

/** What the canvas shows now, in the canvas's own coordinates, less a small margin. */
export function visibleArea(view: { x: number; y: number; zoom: number }, size: { width: number; height: number }): Geometry {
  const margin = 8 / view.zoom;
  return {
    x: -view.x / view.zoom + margin,
    y: -view.y / view.zoom + margin,
    width: size.width / view.zoom - 2 * margin,
    height: size.height / view.zoom - 2 * margin,
  };
}

/** Whether all of `place` is inside `area` (both in canvas coordinates). */
export function isInside(place: Geometry, area: Geometry): boolean {
  return place.x >= area.x && place.y >= area.y && place.x + place.width <= area.x + area.width && place.y + place.height <= area.y + area.height;
}

/** The zoom that shows all of `place` in a `size` view: the current one unless it is too close. */
export function zoomToShow(place: Geometry, size: { width: number; height: number }, current: number, min: number): number {
  const fit = Math.min((size.width - 48) / place.width, (size.height - 48) / place.height);
  return Math.max(min, Math.min(current, fit));
}
