import { describe, expect, it } from 'vitest';
import { parseProcessorReply } from './processor-reply.ts';

describe('parseProcessorReply', () => {
  it('parses every learning type, actions and qualifiers', () => {
    const reply = [
      'FACT: The user works at Acme',
      'PATTERN (#3): Asks for a CSV after each extraction',
      'CORRECTION (#4, 1.0): Write vendor names in uppercase',
      'PREFERENCE (0.8): Totals in euros',
      'TOOL_INSTALL: pandas via pip install pandas',
      'ACTION (high): Ask for the March invoice',
      'ACTION: Send the report',
      'ACTION_DONE: 7',
    ].join('\n');
    const parsed = parseProcessorReply(reply);
    expect(parsed).toEqual({
      ok: true,
      learnings: [
        { type: 'fact', content: 'The user works at Acme', observationId: null, confidence: null },
        { type: 'pattern', content: 'Asks for a CSV after each extraction', observationId: 3, confidence: null },
        { type: 'correction', content: 'Write vendor names in uppercase', observationId: 4, confidence: 1 },
        { type: 'preference', content: 'Totals in euros', observationId: null, confidence: 0.8 },
        { type: 'tool_install', content: 'pandas via pip install pandas', observationId: null, confidence: null },
      ],
      actions: [
        { content: 'Ask for the March invoice', priority: 'high' },
        { content: 'Send the report', priority: 'normal' },
      ],
      doneActionIds: [7],
      fileUpdates: [],
      none: false,
      ignored: [],
    });
  });

  it('reads NONE as "nothing to remember"', () => {
    expect(parseProcessorReply('NONE')).toMatchObject({ ok: true, none: true, learnings: [], fileUpdates: [] });
    expect(parseProcessorReply('  **NONE**.\n')).toMatchObject({ ok: true, none: true });
  });

  it('reads full-file updates between named markers, several in one reply', () => {
    const reply = [
      'PREFERENCE: Uppercase vendor names',
      'USER_MD_UPDATE:',
      '<<<BEGIN user.md>>>',
      '# User',
      '## Preferences',
      '- FACT: this line is file content, not an item',
      '<<<END user.md>>>',
      '',
      'CONTEXT_MD_UPDATE',
      '',
      '<<<BEGIN context.md>>>',
      '# Context',
      '```',
      'NONE',
      '```',
      '<<<END context.md>>>',
    ].join('\n');
    const parsed = parseProcessorReply(reply);
    expect(parsed).toMatchObject({
      ok: true,
      learnings: [{ type: 'preference', content: 'Uppercase vendor names' }],
      fileUpdates: [
        { name: 'user.md', content: '# User\n## Preferences\n- FACT: this line is file content, not an item\n' },
        { name: 'context.md', content: '# Context\n```\nNONE\n```\n' },
      ],
    });
  });

  it('tolerates list markers, bold keywords, chatter and a fenced reply', () => {
    const reply = '```\nHere is what I found:\n- **FACT**: Lives in Zürich\n2. PATTERN: Works late\nThanks!\n```';
    expect(parseProcessorReply(reply)).toMatchObject({
      ok: true,
      learnings: [
        { type: 'fact', content: 'Lives in Zürich' },
        { type: 'pattern', content: 'Works late' },
      ],
      ignored: ['Here is what I found:', 'Thanks!'],
    });
  });

  it('rejects malformed replies as a whole', () => {
    const cases: [string, RegExp][] = [
      ['', /no FACT/],
      ['I could not find anything useful.', /no FACT/],
      ['FACT:', /FACT has no text/],
      ['FACT: ok\nUSER_MD_UPDATE:\n<<<BEGIN user.md>>>\n# User\n- cut off', /no <<<END user.md>>>/],
      ['USER_MD_UPDATE:\n# User', /must be followed by a line <<<BEGIN user.md>>>/],
      ['USER_MD_UPDATE:\n<<<BEGIN os.md>>>\nx\n<<<END os.md>>>', /must be followed by a line <<<BEGIN user.md>>>/],
      ['USER_MD_UPDATE:\n<<<BEGIN user.md>>>\nx\n<<<END os.md>>>', /closes the block of user.md/],
      ['NOTES_MD_UPDATE:\n<<<BEGIN notes.md>>>\nx\n<<<END notes.md>>>', /names no memory file/],
      ['USER_MD_UPDATE:\n<<<BEGIN user.md>>>\n\n<<<END user.md>>>', /would leave user.md empty/],
      [`TOOLS_MD_UPDATE:\n<<<BEGIN tools.md>>>\n${'- x\n'.repeat(151)}<<<END tools.md>>>`, /tools.md update has 151 lines; its limit is 150/],
      ['USER_MD_UPDATE:\n<<<BEGIN user.md>>>\na\n<<<END user.md>>>\nUSER_MD_UPDATE:\n<<<BEGIN user.md>>>\nb\n<<<END user.md>>>', /rewritten twice/],
      ['<<<END user.md>>>', /outside a \*_MD_UPDATE block/],
      ['ACTION_DONE: soon', /needs a pending action id/],
    ];
    for (const [reply, error] of cases) {
      const parsed = parseProcessorReply(reply);
      expect(parsed.ok, reply).toBe(false);
      if (!parsed.ok) expect(parsed.error, reply).toMatch(error);
    }
  });
});
