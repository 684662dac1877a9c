// When the subbar or the keyboard asks for a window: select it and, unless all of it is in view
// already, pan (zooming out only if it would not fit) so it is. Once per request, as soon as the
// window has a place. A window in view never moves: the user may be reaching for it (a notes
// window just added, whose Edit button the pointer is on its way to).
import { useReactFlow } from '@xyflow/react';
import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { useAppStore } from '../connection/store.ts';
import { isInside, visibleArea, zoomToShow, type WindowNode } from './window-nodes.ts';

/** The canvas's farthest zoom out (Canvas passes it to xyflow). */
export const MIN_ZOOM = 0.2;

export function useFocusPan(container: RefObject<HTMLElement | null>, setNodes: (update: (nodes: WindowNode[]) => WindowNode[]) => void): void {
  const flow = useReactFlow();
  const request = useAppStore((state) => state.focus.request);
  const windowId = useAppStore((state) => state.focus.windowId);
  const placed = useAppStore((state) => (state.focus.windowId ? state.geometry[state.focus.windowId] !== undefined : false));
  const done = useRef(0);

  useEffect(() => {
    const place = windowId ? useAppStore.getState().geometry[windowId] : undefined;
    if (request === done.current || !windowId || !place || !container.current) return;
    done.current = request;
    setNodes((nodes) => nodes.map((node) => (node.selected === (node.id === windowId) ? node : { ...node, selected: node.id === windowId })));
    const size = { width: container.current.clientWidth, height: container.current.clientHeight };
    if (isInside(place, visibleArea(flow.getViewport(), size))) return;
    const zoom = zoomToShow(place, size, flow.getZoom(), MIN_ZOOM);
    void flow.setCenter(place.x + place.width / 2, place.y + place.height / 2, { zoom, duration: 250 });
  }, [request, windowId, placed]);
}

