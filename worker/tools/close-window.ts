// close_window: removes a window from the canvas.
import { z } from 'zod';
import { defineTool } from './define-tool.ts';

export const closeWindowSchema = z.object({
  window_id: z.string().min(1).describe('The id create_window returned.'),
});

export interface CloseWindowOperations {
  closeWindow(windowId: string): Promise<boolean>;
}

export function createCloseWindowTool(ops: CloseWindowOperations) {
  return defineTool({
    name: 'close_window',
    description: 'Close a window on the canvas by its id, when it is no longer useful to the user.',
    schema: closeWindowSchema,
    title: (input) => `Closing window ${input.window_id}`,
    async run(input) {
      if (!(await ops.closeWindow(input.window_id))) throw new Error(`No window with id "${input.window_id}" is open.`);
      return `Closed window ${input.window_id}.`;
    },
  });
}
