import { describe, expect, it } from 'vitest';
import type { CanvasWindow } from '../protocol.ts';
import { createCreateWindowTool, type CreateWindowInput } from './create-window.ts';
import { MAX_TOOL_OUTPUT_CHARS, defineTool } from './define-tool.ts';
import { z } from 'zod';

function fakeCanvas() {
  const opened: CreateWindowInput[] = [];
  return {
    opened,
    async openWindow(input: CreateWindowInput): Promise<CanvasWindow> {
      opened.push(input);
      return { id: 'w_1', ...input, created_at: 1, updated_at: 1 };
    },
  };
}

const context = { signal: new AbortController().signal, tool_use_id: 't' };

describe('create_window', () => {
  it('shows the model this schema', () => {
    // What the model sees: a change here changes the agent's behaviour, so it is reviewed.
    expect(createCreateWindowTool(fakeCanvas()).spec).toMatchSnapshot();
  });

  it('opens a notes window', async () => {
    const canvas = fakeCanvas();
    const tool = createCreateWindowTool(canvas);
    const result = await tool.execute({ kind: 'notes', title: '  Plan ', content: '- a' }, context);
    expect(result).toEqual({ content: 'Opened notes window "Plan" (id: w_1).' });
    expect(canvas.opened).toEqual([{ kind: 'notes', title: 'Plan', content: '- a' }]);
    expect(tool.title({ kind: 'notes', title: 'Plan', content: '' })).toBe('Opening a notes window: Plan');
  });

  it('answers invalid input with an error the model can act on', async () => {
    const canvas = fakeCanvas();
    const result = await createCreateWindowTool(canvas).execute({ kind: 'spreadsheet', title: '' }, context);
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('Invalid input for create_window:');
    expect(result.content).toMatch(/- kind: .*"notes"/);
    expect(result.content).toMatch(/- title: /);
    expect(result.content).toMatch(/- content: /);
    expect(canvas.opened).toEqual([]);
  });
});

describe('defineTool', () => {
  const schema = z.object({ n: z.number() });
  it('caps long output and says so', async () => {
    const tool = defineTool({ name: 'big', description: 'x', schema, title: () => 'big', run: async ({ n }) => 'x'.repeat(n) });
    const result = await tool.execute({ n: MAX_TOOL_OUTPUT_CHARS + 10 }, context);
    expect(result.content.length).toBeLessThan(MAX_TOOL_OUTPUT_CHARS + 100);
    expect(result.content).toMatch(/\[output truncated: 10 more characters not shown\]$/);
  });
  it('turns a throw into an error result', async () => {
    const tool = defineTool({ name: 'bad', description: 'x', schema, title: () => 'bad', run: async () => { throw new Error('disk full'); } });
    expect(await tool.execute({ n: 1 }, context)).toEqual({ content: 'bad failed: disk full', is_error: true });
  });
});
