// The script validator: valid scripts pass untouched, and each malformed one is named by path.
import { describe, expect, it } from 'vitest';
import { ScriptError, checkScript, parseScript } from './check.ts';

const ok = { type: 'text', text: 'hi' };

describe('checkScript', () => {
  it('accepts a script using every feature', () => {
    const script = {
      name: 'full',
      turns: [
        {
          expect: {
            last_user_text: 'hi',
            tool_result: { tool_use_id: 'toolu_1', contains: 'done', is_error: false },
            system_contains: 'You are',
            model: 'claude-x',
            has_tools: ['create_window'],
            headers: { 'x-api-key': 'fake', authorization: null },
          },
          reply: {
            content: [ok, { type: 'tool_use', name: 'create_window', input: { a: 1 }, id: 'toolu_x' }],
            stop_reason: 'stop_sequence',
            stop_sequence: '###',
            usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 },
            chunk_chars: 3,
            delay_ms: 5,
            hang_after_events: 2,
          },
        },
        { reply: { content: [], stream_error: { after_events: 1, type: 'overloaded_error', message: 'busy' } } },
        { reply: { error: { status: 429, type: 'rate_limit_error', message: 'slow', headers: { 'retry-after': '1' } } }, repeat: 3 },
        { reply: { content: [ok] }, repeat: -1 },
      ],
    };
    expect(checkScript(script)).toEqual([]);
    expect(parseScript(script)).toBe(script);
  });

  it.each([
    ['not an object', [], ['script: expected an object, got an array']],
    ['missing name and turns', {}, ['script.name: expected a string, got nothing', 'script.turns: expected an array of turns, got nothing']],
    ['unknown top-level field', { name: 's', turns: [], turn: [] }, ['script.turn: unknown field (expected one of "name", "turns")']],
    ['turn without reply', { name: 's', turns: [{}] }, ['script.turns[0].reply: expected an object, got nothing']],
    [
      'reply that is neither',
      { name: 's', turns: [{ reply: { text: 'hi' } }] },
      ['script.turns[0].reply: expected a message ({"content": [...]}) or an error ({"error": {...}})'],
    ],
    [
      'bad block type',
      { name: 's', turns: [{ reply: { content: [ok, { type: 'image' }] } }] },
      ['script.turns[0].reply.content[1].type: expected "text" or "tool_use", got a string ("image")'],
    ],
    [
      'tool_use without input',
      { name: 's', turns: [{ reply: { content: [{ type: 'tool_use', name: 'x' }] } }] },
      ["script.turns[0].reply.content[0].input: expected the tool's arguments as an object, got nothing"],
    ],
    [
      'text that is not a string',
      { name: 's', turns: [{ reply: { content: [{ type: 'text', text: 5 }] } }] },
      ['script.turns[0].reply.content[0].text: expected a string, got a number (5)'],
    ],
    [
      'misspelt reply option',
      { name: 's', turns: [{ reply: { content: [], stop_reson: 'end_turn' } }] },
      [expect.stringMatching(/^script\.turns\[0\]\.reply\.stop_reson: unknown field \(expected one of "content", /)],
    ],
    [
      'unknown stop_reason',
      { name: 's', turns: [{ reply: { content: [], stop_reason: 'done' } }] },
      [expect.stringMatching(/^script\.turns\[0\]\.reply\.stop_reason: expected one of "end_turn", .* got a string \("done"\)$/)],
    ],
    [
      'stop_sequence reason without the sequence',
      { name: 's', turns: [{ reply: { content: [], stop_reason: 'stop_sequence' } }] },
      ['script.turns[0].reply.stop_sequence: expected a string, got nothing'],
    ],
    [
      'usage missing output_tokens',
      { name: 's', turns: [{ reply: { content: [], usage: { input_tokens: 1 } } }] },
      ['script.turns[0].reply.usage.output_tokens: expected an integer >= 0, got nothing'],
    ],
    [
      'chunk_chars of 0',
      { name: 's', turns: [{ reply: { content: [], chunk_chars: 0 } }] },
      ['script.turns[0].reply.chunk_chars: expected an integer >= 1, got a number (0)'],
    ],
    [
      'two endings at once',
      { name: 's', turns: [{ reply: { content: [], hang_after_events: 1, break_after_events: 2 } }] },
      ['script.turns[0].reply: "hang_after_events", "break_after_events" cannot be combined: a reply ends one way'],
    ],
    [
      'error status out of range',
      { name: 's', turns: [{ reply: { error: { status: 200 } } }] },
      ['script.turns[0].reply.error.status: expected an HTTP error status (integer 400-599), got a number (200)'],
    ],
    [
      'error header that is not a string',
      { name: 's', turns: [{ reply: { error: { status: 429, headers: { 'retry-after': 1 } } } }] },
      ['script.turns[0].reply.error.headers.retry-after: expected a string, got a number (1)'],
    ],
    [
      'repeat of 0',
      { name: 's', turns: [{ reply: { content: [] }, repeat: 0 }] },
      ['script.turns[0].repeat: expected an integer >= 1, or -1 for forever, got a number (0)'],
    ],
    [
      'a turn after a forever turn',
      { name: 's', turns: [{ reply: { content: [] }, repeat: -1 }, { reply: { content: [] } }] },
      ['script.turns[1]: unreachable: turns[0] repeats forever ("repeat": -1)'],
    ],
    [
      'bad expectations',
      { name: 's', turns: [{ expect: { has_tools: 'x', headers: { a: 1 }, tool_result: { is_error: 'no' } }, reply: { content: [] } }] },
      [
        'script.turns[0].expect.has_tools: expected an array of tool names, got a string ("x")',
        'script.turns[0].expect.tool_result.is_error: expected a boolean, got a string ("no")',
        'script.turns[0].expect.headers.a: expected a string, or null for "absent", got a number (1)',
      ],
    ],
  ])('rejects %s', (_label, script, problems) => {
    expect(checkScript(script)).toEqual(problems);
  });

  it('parseScript throws a ScriptError listing every problem', () => {
    const bad = { name: 1, turns: [{ reply: { content: [{ type: 'video' }] } }] };
    let caught: unknown;
    try {
      parseScript(bad);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ScriptError);
    expect((caught as ScriptError).problems).toHaveLength(2);
    expect((caught as ScriptError).message).toBe(
      'invalid fake model script: script.name: expected a string, got a number (1); ' +
        'script.turns[0].reply.content[0].type: expected "text" or "tool_use", got a string ("video")',
    );
  });
});
