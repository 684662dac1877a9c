// A document window: a PDF (pdfjs, page by page, with zoom) or an image, read from the stack's
// user space through the worker; what a browser cannot show (a Word document, a workbook, a TIFF
// scan) as the text the document pipeline read from it.
import type { NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import { OCR_LANGUAGES, type OcrLanguageChoice } from '../../protocol/documents.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';
import { Markdown } from '../common/Markdown.tsx';
import { openPdf, openPicture, type PdfHandle, type PictureHandle } from './document-view.ts';
import { ImagePicture } from './ImagePicture.tsx';
import { PdfPage } from './PdfPage.tsx';
import type { DocumentWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

type Loaded =
  | { kind: 'pdf'; pdf: PdfHandle }
  | { kind: 'image'; picture: PictureHandle }
  | { kind: 'text'; text: string; markdown: boolean }
  | { kind: 'error'; message: string }
  | { kind: 'loading' };

/** Images a browser draws itself; a TIFF is not one of them. */
const SHOWN_IMAGES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);
const WORD = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** Zoom levels, as a share of the window's width (1 fits the page to it). */
const ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];
const step = (zoom: number, by: 1 | -1) => (by > 0 ? (ZOOMS.find((z) => z > zoom) ?? zoom) : (ZOOMS.findLast((z) => z < zoom) ?? zoom));

export const DocumentWindowNode = memo(function DocumentWindowNode({ data, selected }: NodeProps<DocumentWindowNodeType>) {
  const { window } = data;
  // What the document pipeline says of this file (reading, read, failed), from the event stream.
  const pipeline = useAppStore((state) => state.view.documents[window.path]);
  const client = useStackClient();
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  // A document shown by its text is loaded again once that text has been read.
  const read = pipeline?.status === 'ready';
  const [page, setPage] = useState(1);
  const [zoom, setZoom] = useState(1);

  useEffect(() => {
    let cancelled = false;
    let release = () => {};
    // Whatever was opened after the window closed (or changed file) is let go at once.
    const keep = (loadedNow: Loaded, free: () => void) => {
      release = free;
      if (cancelled) free();
      else setLoaded(loadedNow);
    };
    setLoaded({ kind: 'loading' });
    setPage(1);
    (async () => {
      try {
        const file = await client.call('read_file', { path: window.path });
        if (file.mime === 'application/pdf') {
          const pdf = await openPdf(file.bytes);
          keep({ kind: 'pdf', pdf }, () => void pdf.destroy());
        } else if (SHOWN_IMAGES.has(file.mime)) {
          const picture = openPicture(new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.mime }));
          keep({ kind: 'image', picture }, () => picture.destroy());
        } else if (!read) {
          keep({ kind: 'loading' }, () => {});
        } else {
          const text = await client.call('read_file', { path: `${window.path}.txt` });
          keep({ kind: 'text', text: new TextDecoder().decode(text.bytes), markdown: file.mime === WORD }, () => {});
        }
      } catch (error) {
        const reason = error instanceof StackCallError ? error.message : error instanceof Error ? error.message : String(error);
        keep({ kind: 'error', message: `${window.path} could not be shown: ${reason}` }, () => {});
      }
    })();
    return () => {
      cancelled = true;
      release();
    };
  }, [client, window.path, read]);

  const pages = loaded.kind === 'pdf' ? loaded.pdf.pages : 1;
  // A scan read in the wrong language can be read again in the right one.
  const scan = window.mime.startsWith('image/') || window.mime === 'application/pdf';
  const readIn = scan && pipeline?.id && pipeline.status !== 'processing' && (
    <select
      class="window-tool doc-language"
      aria-label={`Read ${window.title} again in`}
      title="Read this scan again in another language"
      value=""
      onChange={(event) => {
        const language = event.currentTarget.value as OcrLanguageChoice;
        if (language) void client.call('read_document_again', { document_id: pipeline.id, language }).catch(() => {});
      }}
    >
      <option value="">Read in…</option>
      <option value="auto">Automatic</option>
      {Object.entries(OCR_LANGUAGES).map(([code, name]) => (
        <option key={code} value={code}>
          {name}
        </option>
      ))}
    </select>
  );
  const tools =
    loaded.kind === 'pdf' || loaded.kind === 'image' || readIn ? (
      <div class="doc-tools nodrag">
        {readIn}
        {loaded.kind === 'pdf' && (
          <>
            <button type="button" class="window-tool" aria-label="Previous page" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              ‹
            </button>
            <span class="doc-page" aria-live="polite">
              {page} / {pages}
            </span>
            <button type="button" class="window-tool" aria-label="Next page" disabled={page >= pages} onClick={() => setPage(page + 1)}>
              ›
            </button>
          </>
        )}
        {(loaded.kind === 'pdf' || loaded.kind === 'image') && (
          <>
            <button type="button" class="window-tool" aria-label="Zoom out" disabled={zoom <= ZOOMS[0]!} onClick={() => setZoom(step(zoom, -1))}>
              −
            </button>
            <button type="button" class="window-tool doc-zoom" aria-label="Fit to width" title="Fit to width" onClick={() => setZoom(1)}>
              {Math.round(zoom * 100)}%
            </button>
            <button type="button" class="window-tool" aria-label="Zoom in" disabled={zoom >= ZOOMS.at(-1)!} onClick={() => setZoom(step(zoom, 1))}>
              +
            </button>
          </>
        )}
      </div>
    ) : undefined;

  return (
    <WindowFrame window={window} selected={selected} tools={tools} scrolls>
      {pipeline?.status === 'failed' && (
        <p class="window-problem" role="alert">
          {pipeline.error ?? `${window.title} could not be read.`}
        </p>
      )}
      {pipeline && pipeline.status !== 'failed' && pipeline.progress && pipeline.status !== 'ready' && (
        <p class="window-status doc-progress" role="status">
          <progress max={pipeline.progress.pages} value={pipeline.progress.page} aria-label={`Reading ${window.title}`} />
          Read {pipeline.progress.page} of {pipeline.progress.pages} pages…
        </p>
      )}
      {loaded.kind === 'loading' && (
        <p class="window-empty" role="status">
          Loading {window.path}…
        </p>
      )}
      {loaded.kind === 'error' && (
        <p class="window-problem" role="alert">
          {loaded.message}
        </p>
      )}
      {loaded.kind === 'text' && (loaded.markdown ? <Markdown text={loaded.text} /> : <pre class="doc-text">{loaded.text}</pre>)}
      {loaded.kind === 'image' && <ImagePicture picture={loaded.picture} zoom={zoom} title={window.title} />}
      {loaded.kind === 'pdf' && <PdfPage pdf={loaded.pdf} page={page} zoom={zoom} title={window.title} />}
    </WindowFrame>
  );
});
