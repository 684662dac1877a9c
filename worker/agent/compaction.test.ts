import { describe, expect, it } from 'vitest';
import { applySummary, findCut, needsCompaction, summarise, transcriptOf } from './compaction.ts';
import type { MessageParam, ModelRequest, StreamFn } from './types.ts';

const conversation: MessageParam[] = [
  { role: 'user', content: 'make a table of invoices' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'create_window', input: { kind: 'table' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'Opened table (id: w1).' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
  { role: 'user', content: 'now chart it' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'create_window', input: { kind: 'chart' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: 'Opened chart (id: w2).' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Charted.' }] },
];

describe('compaction', () => {
  it('triggers at the threshold share of the window', () => {
    expect(needsCompaction(149_999)).toBe(false);
    expect(needsCompaction(150_000)).toBe(true);
  });

  it('cuts only where a user message starts a turn, never between a tool call and its result', () => {
    expect(findCut(conversation, 2)).toBe(4);
    expect(findCut(conversation, 4)).toBe(4);
    expect(findCut(conversation, 5)).toBe(-1); // the only turn start left is the very first message
    expect(findCut(conversation.slice(0, 3), 1)).toBe(-1);
  });

  it('folds the summary into the first kept user message', () => {
    const next = applySummary(conversation, 4, 'User wanted an invoice table (w1).');
    expect(next[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: '<conversation_summary>\nUser wanted an invoice table (w1).\n</conversation_summary>' },
        { type: 'text', text: 'now chart it' },
      ],
    });
    expect(next.slice(1)).toEqual(conversation.slice(5));
  });

  it('summarises a transcript with tool calls abbreviated, through the stream function', async () => {
    const seen: ModelRequest[] = [];
    const stream: StreamFn = async function* (request) {
      seen.push(request);
      yield { type: 'message', message: { content: [{ type: 'text', text: '  The summary.  ' }] } as never };
    };
    const transcript = transcriptOf(conversation.slice(0, 4));
    expect(transcript).toContain('[called create_window {"kind":"table"}]');
    expect(transcript).toContain('[tool result: Opened table (id: w1).]');
    expect(await summarise(stream, 'm', transcript, new AbortController().signal)).toBe('The summary.');
    expect(seen[0]!.tools).toEqual([]);
    expect(seen[0]!.messages[0]!.content).toContain('<transcript>');
  });
});
