// One page of a PDF, drawn by pdfjs to fit the window's width times the zoom, and redrawn when
// the window is resized.
import type { PdfHandle } from './document-view.ts';
import { useCanvasDrawing } from './useCanvasDrawing.ts';

/** The page's margin on each side, as .doc-canvas draws it. */
const MARGIN = 8;

export function PdfPage({ pdf, page, zoom, title }: { pdf: PdfHandle; page: number; zoom: number; title: string }) {
  const { box, canvas, problem } = useCanvasDrawing(
    (target, width, cancelled) =>
      pdf.pageWidth(page).then((pageWidth) => (cancelled() ? undefined : pdf.render(page, (zoom * Math.max(100, width - 2 * MARGIN)) / pageWidth, target))),
    (target) => pdf.cancel(target),
    [pdf, page, zoom],
  );

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
