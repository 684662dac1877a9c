// One page of a PDF, drawn by pdfjs to fit the window's width times the zoom, and redrawn when
// the window is resized.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PdfHandle } from './document-view.ts';
import { useWidth } from './useWidth.ts';

/** The page's margin on each side, as .doc-canvas draws it. */
const MARGIN = 8;

export function PdfPage({ pdf, page, zoom, title }: { pdf: PdfHandle; page: number; zoom: number; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const width = useWidth(box);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    const target = canvas.current;
    if (!target || width === 0) return;
    let cancelled = false;
    setProblem(null);
    pdf
      .pageWidth(page)
      .then((pageWidth) => (cancelled ? undefined : pdf.render(page, (zoom * Math.max(100, width - 2 * MARGIN)) / pageWidth, target)))
      .catch((error: unknown) => !cancelled && setProblem(error instanceof Error ? error.message : String(error)));
    return () => {
      cancelled = true;
      pdf.cancel(target);
    };
  }, [pdf, page, zoom, width]);

  return (
    <div class="doc-page-box" ref={box}>
      {problem && (
        <p class="window-problem" role="alert">
          Page {page} could not be drawn: {problem}
        </p>
      )}
      <canvas ref={canvas} class="doc-canvas" role="img" aria-label={`${title}, page ${page}`} hidden={problem !== null} />
    </div>
  );
}
