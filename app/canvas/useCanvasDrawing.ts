// A canvas drawn to fit its box's width (a PDF page, a picture) and drawn again when the box is
// resized or `deps` change; what went wrong, for the window to say.
import type { Inputs } from 'preact/hooks';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useWidth } from './useWidth.ts';

/**
 * `draw` puts a drawing `width` CSS pixels wide (the box's) on the canvas; `cancelled` says when
 * a later drawing or the window's closing took its place. `undraw` stops one under way.
 */
export function useCanvasDrawing(
  draw: (canvas: HTMLCanvasElement, width: number, cancelled: () => boolean) => Promise<unknown>,
  undraw: ((canvas: HTMLCanvasElement) => void) | null,
  deps: Inputs,
) {
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const width = useWidth(box);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    const target = canvas.current;
    if (!target || width === 0) return;
    let cancelled = false;
    setProblem(null);
    draw(target, width, () => cancelled).catch((error: unknown) => !cancelled && setProblem(error instanceof Error ? error.message : String(error)));
    return () => {
      cancelled = true;
      undraw?.(target);
    };
  }, [...deps, width]);

  return { box, canvas, problem };
}
