// While a window is maximised: the visible canvas in canvas coordinates, which it fills. Kept
// current when the canvas is resized or the view moves (the zoom buttons).
import { useReactFlow } from '@xyflow/react';
import type { RefObject } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Geometry } from './layout.ts';
import { visibleArea } from './window-nodes.ts';

export function useCover(container: RefObject<HTMLElement | null>, active: boolean): { area: Geometry | null; refresh: () => void } {
  const flow = useReactFlow();
  const [area, setArea] = useState<Geometry | null>(null);
  const refresh = useCallback(() => {
    const element = container.current;
    if (!active || !element) return;
    const next = visibleArea(flow.getViewport(), { width: element.clientWidth, height: element.clientHeight });
    // Unchanged areas keep their identity, so the windows are not rebuilt for nothing.
    setArea((current) => (current && (['x', 'y', 'width', 'height'] as const).every((key) => Math.abs(current[key] - next[key]) < 0.5) ? current : next));
  }, [active, flow]);

  useEffect(() => {
    if (!active || !container.current) {
      setArea(null);
      return;
    }
    refresh();
    const observer = new ResizeObserver(refresh);
    observer.observe(container.current);
    return () => observer.disconnect();
  }, [active, refresh]);

  return { area, refresh };
}
