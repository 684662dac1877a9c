// A picture (a scan, a photo) drawn at the size the window shows it, times the zoom, and drawn
// again when the window is resized; decoded and scaled in the document view worker.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PictureHandle } from './document-view.ts';
import { useWidth } from './useWidth.ts';

export function ImagePicture({ picture, zoom, title }: { picture: PictureHandle; zoom: number; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const width = useWidth(box);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    const target = canvas.current;
    if (!target || width === 0) return;
    let cancelled = false;
    setProblem(null);
    picture.render(width * zoom, target).catch((error: unknown) => !cancelled && setProblem(error instanceof Error ? error.message : String(error)));
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
