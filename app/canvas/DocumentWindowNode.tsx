// A document window: a PDF (pdfjs, page by page, with zoom) or an image, read from the stack's
// user space through the worker.
import type { Node, NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { DocumentWindow } from '../../worker/protocol.ts';
import { StackCallError } from '../stack-client.ts';
import { useStackClient } from '../stack-context.ts';
import { openPdf, type PdfHandle } from './pdf.ts';
import { WindowFrame } from './WindowFrame.tsx';

export type DocumentWindowNodeType = Node<{ window: DocumentWindow }, 'document'>;

type Loaded = { kind: 'pdf'; pdf: PdfHandle } | { kind: 'image'; url: string } | { kind: 'error'; message: string } | { kind: 'loading' };

export const DocumentWindowNode = memo(function DocumentWindowNode({ data, selected }: NodeProps<DocumentWindowNodeType>) {
  const { window } = data;
  const client = useStackClient();
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  const [page, setPage] = useState(1);
  const [zoom, setZoom] = useState(1);

  useEffect(() => {
    let cancelled = false;
    let cleanup = () => {};
    (async () => {
      try {
        const file = await client.call('read_file', { path: window.path });
        if (file.mime === 'application/pdf') {
          const pdf = await openPdf(file.bytes);
          cleanup = () => void pdf.destroy();
          if (!cancelled) setLoaded({ kind: 'pdf', pdf });
        } else if (file.mime.startsWith('image/')) {
          const url = URL.createObjectURL(new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.mime }));
          cleanup = () => URL.revokeObjectURL(url);
          if (!cancelled) setLoaded({ kind: 'image', url });
        } else {
          setLoaded({ kind: 'error', message: `${window.path} is ${file.mime}; only PDFs and images are shown here.` });
        }
      } catch (error) {
        const reason = error instanceof StackCallError ? error.message : error instanceof Error ? error.message : String(error);
        if (!cancelled) setLoaded({ kind: 'error', message: `${window.path} could not be shown: ${reason}` });
      }
    })();
    return () => {
      cancelled = true;
      cleanup();
    };
  }, [client, window.path]);

  const pages = loaded.kind === 'pdf' ? loaded.pdf.pages : 1;
  const tools =
    loaded.kind === 'pdf' ? (
      <div class="doc-tools nodrag">
        <button type="button" class="window-tool" aria-label="Previous page" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          ‹
        </button>
        <span class="doc-page" aria-live="polite">
          {page} / {pages}
        </span>
        <button type="button" class="window-tool" aria-label="Next page" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          ›
        </button>
        <button type="button" class="window-tool" aria-label="Zoom out" onClick={() => setZoom(Math.max(0.5, zoom - 0.25))}>
          −
        </button>
        <button type="button" class="window-tool" aria-label="Zoom in" onClick={() => setZoom(Math.min(3, zoom + 0.25))}>
          +
        </button>
      </div>
    ) : undefined;

  return (
    <WindowFrame window={window} selected={selected} tools={tools}>
      {loaded.kind === 'loading' && <p class="window-problem">Loading {window.path}…</p>}
      {loaded.kind === 'error' && (
        <p class="window-problem" role="alert">
          {loaded.message}
        </p>
      )}
      {loaded.kind === 'image' && <img class="doc-image" src={loaded.url} alt={window.title} style={{ width: `${zoom * 100}%` }} />}
      {loaded.kind === 'pdf' && <PdfPage pdf={loaded.pdf} page={page} zoom={zoom} title={window.title} />}
    </WindowFrame>
  );
});

function PdfPage({ pdf, page, zoom, title }: { pdf: PdfHandle; page: number; zoom: number; title: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const task = pdf.render(page, zoom, canvas.current);
    task.catch((error: unknown) => setProblem(error instanceof Error ? error.message : String(error)));
    return () => pdf.cancel(canvas.current);
  }, [pdf, page, zoom]);
  return problem ? (
    <p class="window-problem" role="alert">
      Page {page} could not be drawn: {problem}
    </p>
  ) : (
    <canvas ref={canvas} class="doc-canvas" role="img" aria-label={`${title}, page ${page}`} />
  );
}
