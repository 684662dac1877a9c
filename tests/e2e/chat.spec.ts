// The chat around a mission: messages sent while one runs wait as queued, tool calls show what
// they did, and tokens and cost add up per mission and for the session.
import { expect, test } from './test.ts';
import { fakeState, loadScript } from './fake.ts';
import { assistant, openApp, send } from './app.ts';

test('a message sent while a mission runs is queued, then answered in turn; spend adds up', async ({ page }) => {
  await loadScript({
    name: 'queue',
    turns: [
      {
        expect: { last_user_text: 'plan my week' },
        reply: {
          content: [{ type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'Plan', content: '- Monday: invoices' } }],
          usage: { input_tokens: 400, output_tokens: 40 },
        },
      },
      {
        reply: {
          content: [{ type: 'text', text: 'Your plan is on the canvas, with the invoices first thing on Monday morning.' }],
          chunk_chars: 3,
          delay_ms: 120,
          usage: { input_tokens: 600, output_tokens: 60 },
        },
      },
      {
        expect: { last_user_text: 'and friday?' },
        reply: { content: [{ type: 'text', text: 'Friday is free.' }], usage: { input_tokens: 2000, output_tokens: 200 } },
      },
    ],
  });
  await openApp(page);
  await send(page, 'plan my week');
  await expect(page.locator('.msg--streaming')).toBeVisible();
  // The first reply has been counted while the mission still runs.
  const status = page.locator('[data-role=mission-status]');
  await expect(status).toContainText('440 tokens');

  await send(page, 'and friday?');
  const queued = page.locator('[data-role=user]').filter({ hasText: 'and friday?' });
  await expect(queued).toContainText('queued');
  await expect(status).toContainText('1 queued');

  await expect(assistant(page).last()).toHaveText('Friday is free.');
  await expect(queued).not.toContainText('queued');
  await expect(status).toHaveCount(0);
  await expect(assistant(page)).toHaveText(['Your plan is on the canvas, with the invoices first thing on Monday morning.', 'Friday is free.']);
  // 1,000 in and 100 out, then 2,000 and 200, at $3 / $15 per million.
  await expect(page.locator('[data-role=usage]')).toHaveText(['1,100 tokens · $0.0045', '2,200 tokens · $0.0090']);
  await expect(page.locator('.session-usage')).toHaveText('3,300 tokens · $0.01');

  // A tool call opens to show which tool ran, how long it took and what it returned.
  const tool = page.locator('[data-role=tool]');
  await expect(tool).toContainText('Opening a notes window: Plan');
  await tool.locator('summary').click();
  await expect(tool.locator('code')).toHaveText('create_window');
  await expect(tool.locator('.tool-detail')).toContainText('Opened notes window "Plan"');
  await expect(tool.locator('.tool-time')).toHaveText(/\d+(\.\d)? m?s/);
  expect((await fakeState()).failures).toEqual([]);
});
