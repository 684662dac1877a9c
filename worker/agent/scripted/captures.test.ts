import { describe, expect, it } from 'vitest';
import { fillCaptures } from './captures.ts';

const body = {
  messages: [
    { role: 'user', content: 'make a table' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'create_window', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'Opened table window "X" (id: w_abc-123).' }] },
  ],
};

describe('fillCaptures', () => {
  it('fills tool_use inputs from the last tool result', () => {
    const out = fillCaptures({ content: [{ type: 'tool_use', name: 'close_window', input: { window_id: '{{tool_result:id: (w_[\\w-]+)}}', keep: 'as is' } }] }, body);
    expect(out).toEqual({ reply: { content: [{ type: 'tool_use', name: 'close_window', input: { window_id: 'w_abc-123', keep: 'as is' } }] } });
  });
  it('reports a capture that matches nothing', () => {
    const out = fillCaptures({ content: [{ type: 'tool_use', name: 'x', input: { id: '{{tool_result:nope (\\d+)}}' } }] }, body);
    expect(out).toEqual({ problem: 'capture {{tool_result:nope (\\d+)}} matched no tool_result in the last user message' });
  });
});
