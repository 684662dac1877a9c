// Scheduled tasks on the real app, their timers in the stack worker on the real clock (Playwright's
// clock does not reach workers; worker/tasks.test.ts runs the same rules on a fake one). The agent
// schedules by its tool call (the user allows it); a repeating task runs three times, each run a
// mission in the chat; paused it does not fire; a one-off due while the app was closed runs once
// when it opens and says it was missed; a run whose model call fails twice succeeds on its third
// try; the Tasks window shows all of it, and after a reload.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from './test.ts';
import { openApp, send } from './app.ts';
import { fakeState, loadScript } from './fake.ts';
import type { FakeTurn } from '../../worker/agent/scripted/script.ts';

const allow = async (page: import('@playwright/test').Page) => {
  const prompt = page.getByRole('group', { name: 'Permission request' }).last();
  await expect(prompt).toContainText('schedule work that runs later');
  await prompt.getByRole('button', { name: 'Allow', exact: true }).click();
};

const schedule = (input: Record<string, string>): FakeTurn => ({ reply: { content: [{ type: 'tool_use', name: 'schedule_task', input }] } });
const say = (text: string, expect?: FakeTurn['expect']): FakeTurn => ({ ...(expect ? { expect } : {}), reply: { content: [{ type: 'text', text }] } });
const ranFor = (title: string) => ({ last_user_text: `This is the scheduled task "${title}"` });

test('scheduled tasks: a repeating one runs thrice, paused it waits, a missed one runs on open, a failing one retries', async ({ page, context }) => {
  test.setTimeout(6 * 60_000);
  await openApp(page);
  await loadScript({
    name: 'tasks: repeating',
    turns: [
      schedule({ title: 'Check the inbox', prompt: 'Say whether new invoices came in.', when: 'cron', cron: '*/8 * * * * *' }),
      say('Scheduled: every 8 seconds.', { tool_result: { contains: 'Scheduled "Check the inbox"' } }),
      say('Inbox checked: nothing new (1).', ranFor('Check the inbox')),
      say('Inbox checked: nothing new (2).', ranFor('Check the inbox')),
      say('Inbox checked: nothing new (3).', ranFor('Check the inbox')),
    ],
  });
  await send(page, 'check the inbox every 8 seconds');
  await allow(page);
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Scheduled: every 8 seconds.');

  await page.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('menuitem', { name: 'Tasks' }).click();
  const tasksWindow = page.getByRole('region', { name: 'Tasks window: Tasks' });
  const inbox = tasksWindow.getByRole('listitem', { name: 'Check the inbox' });
  await expect(inbox).toContainText('Cron */8 * * * * *');

  // Three runs, each a mission the chat marks as scheduled.
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Inbox checked: nothing new (3).', { timeout: 90_000 });
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Scheduled task "Check the inbox"' })).toHaveCount(3);
  await expect(inbox.getByRole('list', { name: 'Latest runs' }).getByRole('listitem').filter({ hasText: 'succeeded' })).toHaveCount(3);

  // Paused: no run in the next 12 s (a run every 8 s otherwise).
  await inbox.getByRole('button', { name: 'Pause' }).click();
  await expect(inbox).toContainText('Paused');
  // A run that started just before the pause finishes first; then nothing more may come.
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  await page.waitForTimeout(1_500);
  const before = (await fakeState()).requests.length;
  await page.waitForTimeout(12_000);
  expect((await fakeState()).requests.length, 'a paused task does not fire').toBe(before);

  // A one-off due while the app is closed: it runs once when the app opens, and says it was missed.
  const due = new Date(Date.now() + 12_000).toISOString();
  await loadScript({
    name: 'tasks: missed',
    turns: [
      schedule({ title: 'Pay Acme', prompt: 'Remind the user to pay the Acme invoice.', when: 'once', at: due }),
      say('I will remind you.', { tool_result: { contains: 'Scheduled "Pay Acme"' } }),
      say('Reminder: pay the Acme invoice today.', ranFor('Pay Acme')),
    ],
  });
  await send(page, 'remind me to pay Acme in a moment');
  await allow(page);
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('I will remind you.');
  await page.close();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(due) - Date.now()) + 3_000));
  const reopened = await context.newPage();
  await openApp(reopened);
  await expect(reopened.locator('[data-role=notice]').filter({ hasText: 'Scheduled task "Pay Acme" (missed while the app was closed, run now).' })).toBeVisible({ timeout: 30_000 });
  await expect(reopened.locator('[data-role=assistant]').last()).toHaveText('Reminder: pay the Acme invoice today.');
  const acme = reopened.getByRole('region', { name: 'Tasks window: Tasks' }).getByRole('listitem', { name: 'Pay Acme' });
  await expect(acme).toContainText('Done');
  await expect(acme).toContainText('missed while the app was closed, run when it opened');

  // A run whose model call fails twice: tried again after 10 s and 30 s, then it succeeds.
  const modelDown: FakeTurn = { reply: { error: { status: 400, message: 'fake: the model refused this request' } } };
  await loadScript({
    name: 'tasks: retries',
    turns: [
      schedule({ title: 'Weekly report', prompt: 'Write the weekly report.', when: 'once', at: new Date(Date.now() + 3_000).toISOString() }),
      say('It will run in a moment.', { tool_result: { contains: 'Scheduled "Weekly report"' } }),
      modelDown,
      modelDown,
      say('The weekly report is written.', ranFor('Weekly report')),
    ],
  });
  await send(reopened, 'write the weekly report in a moment');
  await allow(reopened);
  await expect(reopened.locator('[data-role=assistant]').last()).toHaveText('The weekly report is written.', { timeout: 90_000 });
  const report = reopened.getByRole('region', { name: 'Tasks window: Tasks' }).getByRole('listitem', { name: 'Weekly report' });
  await expect(report.getByRole('list', { name: 'Latest runs' }).getByRole('listitem')).toHaveCount(1);
  await expect(report.getByRole('list', { name: 'Latest runs' })).toContainText('succeeded · after 2 retries');
  await expect(reopened.locator('[data-role=notice]').filter({ hasText: 'Scheduled task "Weekly report" (try 3 of 3).' })).toBeVisible();
  expect((await fakeState()).failures).toEqual([]);

  // Everything survives a reload: the tasks, their state and their runs.
  await reopened.reload();
  await expect(reopened.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const list = reopened.getByRole('region', { name: 'Tasks window: Tasks' }).getByRole('list', { name: 'Scheduled tasks' });
  await expect(list.getByRole('listitem', { name: 'Check the inbox' })).toContainText('Paused');
  await expect(list.getByRole('listitem', { name: 'Pay Acme' })).toContainText('Done');
  await expect(list.getByRole('listitem', { name: 'Weekly report' })).toContainText('after 2 retries');
  // The edit form too: every control labelled, nothing serious for assistive technology.
  await list.getByRole('listitem', { name: 'Check the inbox' }).getByRole('button', { name: 'Edit' }).click();
  const form = reopened.getByRole('form', { name: 'Edit Check the inbox' });
  await form.getByLabel('Cron expression').fill('0 9 * * 1');
  await form.getByLabel('Time zone').fill('Europe/Berlin');
  const results = await new AxeBuilder({ page: reopened }).include('[data-kind=tasks]').analyze();
  expect(results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await form.getByRole('button', { name: 'Save task' }).click();
  await expect(list.getByRole('listitem', { name: 'Check the inbox' })).toContainText('Cron 0 9 * * 1 (Europe/Berlin)');
  await expect(list.getByRole('listitem', { name: 'Check the inbox' })).toContainText('Paused');
  // A schedule that cannot run is refused, saying why, and the form stays open.
  await list.getByRole('listitem', { name: 'Check the inbox' }).getByRole('button', { name: 'Edit' }).click();
  await form.getByLabel('Cron expression').fill('every monday');
  await form.getByRole('button', { name: 'Save task' }).click();
  await expect(reopened.getByRole('region', { name: 'Tasks window: Tasks' }).getByRole('alert')).toContainText('"every monday" in Europe/Berlin is not a schedule this can run');
  await form.getByRole('button', { name: 'Cancel' }).click();
  // Deleted (after the user confirms), with its runs.
  reopened.once('dialog', (dialog) => void dialog.accept());
  await list.getByRole('listitem', { name: 'Pay Acme' }).getByRole('button', { name: 'Delete' }).click();
  await expect(list.getByRole('listitem', { name: 'Pay Acme' })).toHaveCount(0);
});
