// Memory and the event log across reloads: the chat comes back, a cut-off mission says so, and a
// user's correction becomes part of every later system prompt.
import { expect, test } from './test.ts';
import { fakeState, loadScript } from './fake.ts';
import { openApp, send } from './app.ts';

test('a reload during a mission replays the chat and shows the mission as interrupted', async ({ page }) => {
  await loadScript({
    name: 'interrupted',
    turns: [
      { reply: { content: [{ type: 'text', text: 'Done with the first one.' }] } },
      { reply: { content: [{ type: 'text', text: 'Working on a very long answer that never ends' }], chunk_chars: 6, hang_after_events: 6 } },
      {
        // The model is told the earlier request did not finish.
        expect: { last_user_text: 'are you there' },
        reply: { content: [{ type: 'text', text: 'Yes, I am back.' }] },
      },
    ],
  });
  await openApp(page);
  await send(page, 'first question');
  await expect(page.locator('[data-role=assistant]')).toHaveText('Done with the first one.');
  await send(page, 'second question');
  await expect(page.locator('.msg--streaming')).toContainText('Working');

  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(page.locator('[data-role=user]')).toHaveText(['first question', 'second question']);
  await expect(page.locator('[data-role=assistant]').first()).toHaveText('Done with the first one.');
  await expect(page.locator('[data-role=assistant]').nth(1)).toContainText('Working');
  await expect(page.locator('[data-role=error][data-code=interrupted]')).toContainText('Interrupted');
  await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0);

  await send(page, 'are you there?');
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Yes, I am back.');
  const state = await fakeState();
  expect(state.failures).toEqual([]);
  expect(JSON.stringify(state.requests.at(-1)!.body)).toContain('This request was interrupted');
});

test('a correction is learned into user.md and carried by the next session', async ({ page }) => {
  await loadScript({
    name: 'correction',
    turns: [
      {
        expect: { last_user_text: 'always write vendor names in uppercase' },
        reply: { content: [{ type: 'text', text: 'Understood: vendor names in uppercase from now on.' }] },
      },
      {
        // The batch processor: a cheap, tool-less call over the observations.
        expect: { model: 'claude-haiku-5-5', system_contains: 'You maintain the long-term memory of Stackdocs' },
        reply: {
          content: [
            {
              type: 'text',
              text: 'CORRECTION (1.0): Write vendor names in uppercase.\nUSER_MD_UPDATE:\n<<<BEGIN user.md>>>\n# User\n\n## Preferences\n- Always write vendor names in UPPERCASE.\n<<<END user.md>>>',
            },
          ],
        },
      },
      {
        expect: { system_contains: 'Always write vendor names in UPPERCASE.' },
        reply: { content: [{ type: 'tool_use', name: 'search_memory', input: { query: 'vendor names' } }] },
      },
      {
        // search_memory finds the learning after the reload, ranked from memory.db.
        expect: { tool_result: { contains: '[correction] Write vendor names in uppercase.', is_error: false } },
        reply: { content: [{ type: 'text', text: 'The vendor is ACME GMBH.' }] },
      },
    ],
  });
  await openApp(page);
  await send(page, 'always write vendor names in uppercase');
  await expect(page.locator('[data-role=assistant]')).toHaveText('Understood: vendor names in uppercase from now on.');

  // Learning reads finished turns: wait until the mission has ended.
  await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('button', { name: 'Learn now' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Learned' })).toContainText('user.md');
  await page.getByRole('button', { name: 'Cancel' }).click();

  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await send(page, 'who is the vendor?');
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('The vendor is ACME GMBH.');
  expect((await fakeState()).failures).toEqual([]);
});
