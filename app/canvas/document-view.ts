// PDF pages for the document windows, drawn in the PDF view worker
// (worker/documents/document-view-worker.ts) and shown as bitmaps: the page's main thread only posts a
// request and puts the finished picture in place, so typing stays answered while a large page
// draws. The worker starts with the first PDF window and ends a minute after the last one closes.
import * as Comlink from 'comlink';
import type { DocumentViewApi } from '../../worker/documents/document-view-worker.ts';

export interface PdfHandle {
  pages: number;
  /** A page's width in CSS pixels at scale 1. */
  pageWidth(page: number): Promise<number>;
  render(page: number, scale: number, canvas: HTMLCanvasElement): Promise<void>;
  cancel(canvas: HTMLCanvasElement | null): void;
  destroy(): Promise<void>;
}

/** How long the worker stays once no document is open, so a window closed and opened again starts at once. */
const IDLE_END_MS = 60_000;

let viewer: { worker: Worker; api: Comlink.Remote<DocumentViewApi> } | null = null;
let open = 0;
let idleEnd: ReturnType<typeof setTimeout> | undefined;

function view(): Comlink.Remote<DocumentViewApi> {
  clearTimeout(idleEnd);
  if (!viewer) {
    const worker = new Worker(new URL('../../worker/documents/document-view-worker.ts', import.meta.url), { type: 'module', name: 'document-view' });
    viewer = { worker, api: Comlink.wrap<DocumentViewApi>(worker) };
  }
  return viewer.api;
}

function released(): void {
  if (--open > 0) return;
  clearTimeout(idleEnd);
  idleEnd = setTimeout(() => {
    viewer?.worker.terminate();
    viewer = null;
  }, IDLE_END_MS);
}

// Each canvas is named to the worker by a number, so a new drawing for it replaces the last.
const targets = new WeakMap<HTMLCanvasElement, number>();
let nextTarget = 1;
function targetOf(canvas: HTMLCanvasElement): number {
  let target = targets.get(canvas);
  if (target === undefined) targets.set(canvas, (target = nextTarget++));
  return target;
}

/** Puts a finished drawing on the canvas, `cssWidth` pixels wide on the page. */
function show(bitmap: ImageBitmap, canvas: HTMLCanvasElement, cssWidth: number): void {
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  canvas.style.width = `${cssWidth}px`;
  canvas.getContext('bitmaprenderer')!.transferFromImageBitmap(bitmap);
}

const dataUrl = (path: string) => new URL(`${import.meta.env.BASE_URL}pdfjs/${path}/`, document.baseURI).href;

/**
 * Opens a PDF for showing. The bytes are handed to the worker (their buffer is transferred when
 * they fill it, else copied). Rejects with pdfjs's reason for a damaged or password-protected file.
 */
export async function openPdf(bytes: Uint8Array): Promise<PdfHandle> {
  const api = view();
  open++;
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
  let id: number;
  let pages: number;
  try {
    ({ id, pages } = await api.open(Comlink.transfer(own, [own.buffer as ArrayBuffer]), { standardFontDataUrl: dataUrl('standard_fonts'), cMapUrl: dataUrl('cmaps'), wasmUrl: dataUrl('wasm') }));
  } catch (error) {
    released();
    throw error;
  }
  let closed = false;
  // The latest drawing asked for each canvas: an older one that finishes late is dropped.
  const latest = new WeakMap<HTMLCanvasElement, number>();
  let asked = 0;
  return {
    pages,
    pageWidth: (page) => api.pageWidth(id, page),
    async render(page, scale, canvas) {
      const mine = ++asked;
      latest.set(canvas, mine);
      const ratio = globalThis.devicePixelRatio || 1;
      const bitmap = await api.render(id, page, scale * ratio, targetOf(canvas));
      if (!bitmap) return;
      if (latest.get(canvas) !== mine || closed) {
        bitmap.close();
        return;
      }
      show(bitmap, canvas, bitmap.width / ratio);
    },
    cancel(canvas) {
      if (!canvas || !targets.has(canvas)) return;
      latest.delete(canvas);
      void api.cancel(targets.get(canvas)!);
    },
    async destroy() {
      if (closed) return;
      closed = true;
      try {
        await api.close(id);
      } finally {
        released();
      }
    },
  };
}

export interface PictureHandle {
  /**
   * Draws the picture `width` CSS pixels wide on the canvas (decoded and scaled in the worker;
   * never more pixels than the picture has). A later drawing for the same canvas wins. Rejects
   * with the browser's reason when the picture cannot be decoded.
   */
  render(width: number, canvas: HTMLCanvasElement): Promise<void>;
  destroy(): void;
}

/** A picture (PNG, JPEG, WebP, GIF) for showing; the Blob is handed to the worker, not copied. */
export function openPicture(picture: Blob): PictureHandle {
  const api = view();
  open++;
  let closed = false;
  const latest = new WeakMap<HTMLCanvasElement, number>();
  let asked = 0;
  return {
    async render(width, canvas) {
      if (closed) return;
      const mine = ++asked;
      latest.set(canvas, mine);
      const bitmap = await api.picture(picture, width * (globalThis.devicePixelRatio || 1));
      if (latest.get(canvas) !== mine || closed) {
        bitmap.close();
        return;
      }
      show(bitmap, canvas, width);
    },
    destroy() {
      if (closed) return;
      closed = true;
      released();
    },
  };
}
