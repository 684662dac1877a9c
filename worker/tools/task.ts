// task: starts a subagent (subagents.ts) with its own context, a prompt and a few tools, and
// returns its short answer. Several calls in one turn run together.
import { z } from 'zod';
import type { ToolContext, ToolResult } from '../agent/types.ts';
import { GRANTABLE_TOOLS, READ_ONLY_TOOLS, type SubagentRequest } from '../subagents.ts';
import { defineTool } from './define-tool.ts';
import description from './task.md?raw';

export const taskSchema = z.object({
  description: z.string().trim().min(1).max(80).describe('A few words the user sees on the task board, e.g. "Total the March invoices".'),
  prompt: z.string().min(1).max(20_000).describe('The whole task, written for a helper that knows nothing else: what to do, where, and what to answer with.'),
  tools: z
    .array(z.enum(GRANTABLE_TOOLS))
    .max(GRANTABLE_TOOLS.length)
    .optional()
    .describe(`The tools it may use; when left out, the read-only ones (${READ_ONLY_TOOLS.join(', ')}).`),
});

export function createTaskTool(run: (request: SubagentRequest, context: ToolContext) => Promise<ToolResult>) {
  return defineTool({
    name: 'task',
    description,
    schema: taskSchema,
    title: (input) => `Subagent: ${input.description}`,
    run: (input, context) => run(input, context),
  });
}
