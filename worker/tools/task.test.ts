import { describe, expect, it } from 'vitest';
import { createTaskTool } from './task.ts';

describe('task tool', () => {
  const calls: unknown[] = [];
  const tool = createTaskTool(async (request, context) => {
    calls.push({ request, id: context.tool_use_id });
    return { content: 'the answer' };
  });

  it('shows the model this schema', () => {
    expect(tool.spec).toMatchSnapshot();
  });

  it('hands a valid request to its subagents with the call id, and refuses a tool it may not give', async () => {
    const signal = new AbortController().signal;
    expect(await tool.execute({ description: ' Totals ', prompt: 'add up', tools: ['read', 'bash'] }, { signal, tool_use_id: 'tu_9' })).toEqual({ content: 'the answer' });
    expect(calls).toEqual([{ request: { description: 'Totals', prompt: 'add up', tools: ['read', 'bash'] }, id: 'tu_9' }]);
    const refused = tool.invalid!({ description: 'x', prompt: 'y', tools: ['task'] });
    expect(refused?.is_error).toBe(true);
    expect(refused?.content).toMatch(/^Invalid input for task:\n- tools\.0: /);
    expect(tool.title({ description: 'Totals', prompt: 'p' })).toBe('Subagent: Totals');
  });
});
