// Subagents on the real app: two `task` calls in one model turn work at the same time on the task
// board (which opens by itself), each with its spend; the user cancels one and the agent is told;
// and a token budget set in Settings stops a mission that its subagent takes over it.
import { expect, test } from './test.ts';
import { assistant, openApp, send } from './app.ts';
import { fakeState, loadScript } from './fake.ts';

test('subagents: two run at once on the task board with their costs; cancelling one tells the agent', async ({ page }) => {
  await openApp(page);
  await loadScript({
    name: 'two subagents',
    turns: [
      {
        reply: {
          content: [
            { type: 'tool_use', name: 'task', input: { description: 'March invoices', prompt: 'Count the March invoices in documents/.' } },
            { type: 'tool_use', name: 'task', input: { description: 'April invoices', prompt: 'Count the April invoices in documents/.' } },
          ],
        },
      },
      // The two subagents ask at the same moment, in either order: whichever comes first answers
      // slowly (both are at work meanwhile), the other never does until the user cancels it.
      { expect: { system_contains: 'You are a subagent' }, reply: { content: [{ type: 'text', text: 'Found 2 invoices.' }], delay_ms: 500 } },
      { expect: { system_contains: 'You are a subagent' }, reply: { content: [{ type: 'text', text: 'never sent' }], hang_after_events: 1 } },
      {
        expect: { tool_result: { contains: 'The user cancelled the subagent', is_error: true } },
        reply: { content: [{ type: 'text', text: 'One month is counted; the other was cancelled.' }] },
      },
    ],
  });
  await send(page, 'Count the invoices of March and of April');

  const board = page.getByRole('list', { name: 'Subagents' });
  const march = board.getByRole('listitem', { name: 'March invoices' });
  const april = board.getByRole('listitem', { name: 'April invoices' });
  // Both at work at the same time.
  await expect(march.locator('.task-status')).toHaveText('Running');
  await expect(april.locator('.task-status')).toHaveText('Running');
  await expect(page.locator('.board-summary')).toHaveText('2 at work · 2 in all');

  // One finishes with its answer and its cost; the other is still at work: the user cancels it.
  const done = board.getByRole('listitem').filter({ has: page.locator('.task-status', { hasText: 'Done' }) });
  const working = board.getByRole('listitem').filter({ has: page.locator('.task-status', { hasText: 'Running' }) });
  await expect(done).toHaveCount(1, { timeout: 15_000 });
  await expect(done.locator('.subagent-activity')).toHaveText('Found 2 invoices.');
  await expect(done.locator('[data-role=subagent-spend]')).toHaveText(/^\d[\d,]* tokens · \$0\.\d{4} · 0 tool calls · /);
  await expect(working).toHaveCount(1);
  await working.getByRole('button', { name: 'Cancel' }).click();

  await expect(assistant(page).last()).toHaveText('One month is counted; the other was cancelled.');
  const cancelled = board.getByRole('listitem').filter({ has: page.locator('.task-status', { hasText: 'Cancelled' }) });
  await expect(cancelled).toHaveCount(1);
  await expect(cancelled.locator('[data-role=subagent-spend]')).toHaveText(/^0 tokens/);
  await expect(page.locator('.board-summary')).toHaveText('All finished · 2 in all');

  // Its transcript: what it was asked, with which tools, and what it said.
  await done.getByRole('button', { name: 'Transcript' }).click();
  const transcript = done.getByRole('list', { name: /transcript$/ });
  await expect(transcript).toContainText('Count the');
  await expect(transcript).toContainText('(tools: read, glob, grep, search_memory, load_skill, read_ocr)');
  await expect(transcript).toContainText('Said Found 2 invoices.');

  const state = await fakeState();
  expect(state.failures).toEqual([]);
  // The subagents' requests carried their own prompt alone, not the conversation.
  const asked = state.requests.slice(1, 3).map((request) => (request.body as { messages: { content: unknown }[] }).messages);
  expect(asked.map((messages) => messages.length)).toEqual([1, 1]);
  expect(asked.map((messages) => String(messages[0]!.content)).sort()).toEqual(['Count the April invoices in documents/.', 'Count the March invoices in documents/.']);
  // The second subagent asked before the first had its answer: they overlapped.
  expect(state.requests[2]!.turn).toBe(2);

  // The board stays after a reload, rebuilt from the stored events.
  await page.reload();
  await expect(page.getByRole('list', { name: 'Subagents' }).getByRole('listitem')).toHaveCount(2);
  await expect(page.locator('.board-summary')).toHaveText('All finished · 2 in all');
});

test('a token budget stops the mission once it and its subagent reach it, and says so', async ({ page }) => {
  await openApp(page);
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('spinbutton', { name: 'Token budget per mission' }).fill('1000');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByRole('dialog')).toBeHidden();

  await loadScript({
    name: 'budget',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'task', input: { description: 'Read everything', prompt: 'Read every document.' } }], usage: { input_tokens: 400, output_tokens: 100 } } },
      { reply: { content: [{ type: 'tool_use', name: 'glob', input: { pattern: '**/*' } }], usage: { input_tokens: 600, output_tokens: 100 } } },
    ],
  });
  await send(page, 'Read all my documents');
  await expect(page.locator('[data-role=error][data-code=budget]')).toContainText("Stopped at this mission's token budget: it used 1,200 tokens of the 1,000 allowed (its subagents included).");
  const item = page.getByRole('list', { name: 'Subagents' }).getByRole('listitem', { name: 'Read everything' });
  await expect(item.locator('.task-status')).toHaveText('Cancelled');
  await expect(item.locator('[data-role=subagent-spend]')).toHaveText(/^700 tokens · /);
  const state = await fakeState();
  expect(state.failures).toEqual([]);
  expect(state.requests).toHaveLength(2);

  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await expect(page.getByRole('spinbutton', { name: 'Token budget per mission' })).toHaveValue('1000');
});
