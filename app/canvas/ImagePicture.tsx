// A picture (a scan, a photo) drawn at the size the window shows it, times the zoom, and drawn
// again when the window is resized; decoded and scaled in the document view worker.
import type { PictureHandle } from './document-view.ts';
import { useCanvasDrawing } from './useCanvasDrawing.ts';

export function ImagePicture({ picture, zoom, title }: { picture: PictureHandle; zoom: number; title: string }) {
  const { box, canvas, problem } = useCanvasDrawing((target, width) => picture.render(width * zoom, target), null, [picture, zoom]);

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
