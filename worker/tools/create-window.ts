// create_window: opens a window on the canvas. The agent owns its content; the user its geometry.
import { z } from 'zod';
import type { CanvasWindow } from '../protocol.ts';
import description from './create-window.md?raw';
import { defineTool } from './define-tool.ts';

export const createWindowSchema = z.object({
  kind: z.literal('notes').describe('The window type. "notes" shows Markdown.'),
  title: z.string().trim().min(1).max(120).describe('A short title for the window.'),
  content: z.string().max(200_000).describe('The window content, as Markdown.'),
});

export type CreateWindowInput = z.infer<typeof createWindowSchema>;

/** What the tool needs from the canvas; injected so the tool is tested without a worker. */
export interface CanvasOperations {
  openWindow(input: CreateWindowInput): Promise<CanvasWindow>;
}

export function createCreateWindowTool(canvas: CanvasOperations) {
  return defineTool({
    name: 'create_window',
    description,
    schema: createWindowSchema,
    title: (input) => `Opening a ${input.kind} window: ${input.title}`,
    async run(input) {
      const opened = await canvas.openWindow(input);
      return `Opened ${opened.kind} window "${opened.title}" (id: ${opened.id}).`;
    },
  });
}
