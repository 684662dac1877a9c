// The width of an element, kept current as it is resized — settled, not on every frame of a drag,
// since what depends on it (a PDF page) is costly to redraw.
import type { RefObject } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const SETTLE_MS = 120;

export function useWidth(element: RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const target = element.current;
    if (!target) return;
    setWidth(target.clientWidth);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const observer = new ResizeObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(() => setWidth(target.clientWidth), SETTLE_MS);
    });
    observer.observe(target);
    return () => {
      clearTimeout(timer);
      observer.disconnect();
    };
  }, [element]);
  return width;
}
