// A picture (a scan, a photo) drawn at the size the window shows it, times the zoom, and drawn
// again when the window is resized. An <img> would have the browser keep the whole decoded
// picture while it is shown, often twice: a 1300x1800 scan 9.5 MB a copy, a phone's 12 MP photo
// 48 MB; drawn to a window's width it holds about 1 MB.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useWidth } from './useWidth.ts';

export function ImagePicture({ picture, zoom, title }: { picture: { blob: Blob; width: number }; zoom: number; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const width = useWidth(box);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    const target = canvas.current;
    if (!target || width === 0) return;
    let cancelled = false;
    setProblem(null);
    const shownWidth = width * zoom;
    const ratio = globalThis.devicePixelRatio || 1;
    // Never wider than the picture itself: zoomed past it, the browser scales what is drawn.
    const resizeWidth = Math.max(1, Math.min(picture.width, Math.round(shownWidth * ratio)));
    createImageBitmap(picture.blob, { resizeWidth, resizeQuality: 'high' })
      .then((bitmap) => {
        if (cancelled) return bitmap.close();
        target.width = bitmap.width;
        target.height = bitmap.height;
        target.style.width = `${shownWidth}px`;
        target.getContext('bitmaprenderer')!.transferFromImageBitmap(bitmap);
      })
      .catch((error: unknown) => !cancelled && setProblem(error instanceof Error ? error.message : String(error)));
    return () => {
      cancelled = true;
    };
  }, [picture, zoom, width]);

  return (
    <div class="doc-page-box" ref={box}>
      {problem && (
        <p class="window-problem" role="alert">
          The picture could not be drawn: {problem}
        </p>
      )}
      <canvas ref={canvas} class="doc-image" role="img" aria-label={title} hidden={problem !== null} />
    </div>
  );
}

/** A picture's width in pixels, read from its header (the picture is not decoded for it). */
export async function pictureWidth(blob: Blob): Promise<number> {
  const url = URL.createObjectURL(blob);
  try {
    const image = new Image();
    image.src = url;
    await new Promise<void>((resolve, reject) => {
      image.onload = () => resolve();
      image.onerror = () => reject(new Error('the browser cannot read this picture'));
    });
    return image.naturalWidth;
  } finally {
    URL.revokeObjectURL(url);
  }
}
