// A scripted conversation end to end: the user's correction goes through hooks, transcript.db,
// a batch by the (scripted) cheap model, into user.md and memory.db, and into the next session's
// system prompt — across a reopening of the databases.
import { describe, expect, it } from 'vitest';
import type { CompletionRequest } from './processor.ts';
import { openTestMemory } from './test-helpers.ts';

/** Stands in for Haiku: answers from what the prompt contains, as the real model would. */
async function scriptedHaiku(request: CompletionRequest): Promise<string> {
  const current = /<memory_file name="user.md"[^>]*>\n([\s\S]*?)\n<\/memory_file>/.exec(request.prompt)![1]!;
  if (!/always write vendor names in uppercase/i.test(request.prompt)) return 'NONE';
  const id = /<observation id="(\d+)"[^>]*>\n<user>[^<]*uppercase/i.exec(request.prompt)![1];
  const updated = current.replace('## Preferences\n', '## Preferences\n- Always write vendor names in UPPERCASE (e.g. ACME LTD), in chat, tables and exports.\n');
  return [
    `CORRECTION (#${id}, 1.0): Vendor names are always written in uppercase, e.g. ACME LTD, not Acme Ltd.`,
    'USER_MD_UPDATE:',
    '<<<BEGIN user.md>>>',
    updated,
    '<<<END user.md>>>',
  ].join('\n');
}

describe('a user correction changes later behaviour', () => {
  it('"always write vendor names in uppercase" ends up in user.md and the next session\'s prompt', async () => {
    const first = await openTestMemory();
    expect((await first.loadPrompt()).text).not.toMatch(/uppercase/i);
    const processor = first.createProcessor({ complete: scriptedHaiku });
    const { hooks } = await first.startSession({ processor, sessionId: 'monday', batchEvery: 2 });

    await hooks.userPromptSubmit('Extract the vendor from invoice.pdf');
    hooks.postToolUse({ name: 'read', input: { path: 'documents/invoice.pdf' }, output: 'Invoice from Acme Ltd ...', ok: true });
    hooks.agentText('The vendor is Acme Ltd.');
    expect((await hooks.stop()).batch).toBeUndefined();

    await hooks.userPromptSubmit('That vendor is wrong: always write vendor names in uppercase from now on.');
    hooks.postToolUse({ name: 'update_window', input: { cell: 'vendor', value: 'ACME LTD' }, output: 'ok', ok: true });
    hooks.agentText('Fixed: ACME LTD. I will write vendor names in uppercase.');
    const stopped = await hooks.stop();
    expect(await stopped.batch).toMatchObject({ status: 'processed', observations: 2, learnings: 1, files: ['user.md'] });
    expect(await hooks.sessionEnd()).toMatchObject({ ok: true });

    expect(await first.files.read('user.md')).toContain('- Always write vendor names in UPPERCASE');
    const [learning] = await first.search('vendor uppercase');
    expect(learning).toMatchObject({ type: 'correction', content: expect.stringContaining('uppercase') });
    await first.close();

    // The next session: a new worker opens the same stack.
    const next = await openTestMemory({ disk: first.disk, paths: first.paths });
    const prompt = await next.loadPrompt();
    expect(prompt.sections).toContain('User');
    expect(prompt.text).toContain('## User\n\n### Preferences\n- Always write vendor names in UPPERCASE (e.g. ACME LTD)');
    expect((await next.search('uppercase'))[0]!.type).toBe('correction');
    expect(await next.transcript.countUnprocessed()).toBe(0);
    await next.close();
  });
});
