// The canvas around the windows: the subbar, keyboard shortcuts, and accessibility.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { fakeState, loadScript } from './fake.ts';
import { openApp } from './app.ts';

const twoWindows = {
  name: 'two windows',
  turns: [
    {
      reply: {
        content: [
          { type: 'tool_use' as const, name: 'create_window', input: { kind: 'notes', title: 'First', content: 'one' } },
          { type: 'tool_use' as const, name: 'create_window', input: { kind: 'table', title: 'Second', columns: [{ key: 'a', label: 'A' }], rows: [{ a: 'x' }] } },
        ],
      },
    },
    { reply: { content: [{ type: 'text' as const, text: 'Two windows.' }] } },
  ],
};

test('the subbar lists windows, focuses, closes, and adds a notes window the agent hears of', async ({ page }) => {
  await loadScript({
    ...twoWindows,
    turns: [...twoWindows.turns, { expect: { last_user_text: 'The user opened a new notes window "Untitled notes"' }, reply: { content: [{ type: 'text', text: 'I see your new window.' }] } }],
  });
  await openApp(page);
  await page.getByRole('textbox', { name: 'Message' }).fill('open two');
  await page.getByRole('button', { name: 'Send' }).click();
  const bar = page.getByRole('navigation', { name: 'Windows' });
  await expect(bar.getByRole('button', { name: /^Show / })).toHaveText([/First/, /Second/]);
  await bar.getByRole('button', { name: 'Show Second' }).click();
  await expect(page.locator('.window--focused')).toHaveAttribute('aria-label', 'Table window: Second');
  await bar.getByRole('button', { name: 'Close First' }).click();
  await expect(page.getByRole('region', { name: 'Notes window: First' })).toHaveCount(0);
  await bar.getByRole('button', { name: 'New notes window' }).click();
  await expect(page.getByRole('region', { name: 'Notes window: Untitled notes' })).toBeVisible();
  await page.getByRole('textbox', { name: 'Message' }).fill('look');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('I see your new window.');
  expect((await fakeState()).failures).toEqual([]);
});

test('keyboard: Ctrl-K focuses the chat, Alt-] cycles windows, Esc stops a mission', async ({ page }) => {
  await loadScript({
    ...twoWindows,
    turns: [...twoWindows.turns, { reply: { content: [{ type: 'text', text: 'A slow answer that goes on and on and on for a long time' }], chunk_chars: 4, delay_ms: 150 } }],
  });
  await openApp(page);
  await page.getByRole('textbox', { name: 'Message' }).fill('open two');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Two windows.');
  await page.locator('.canvas').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('Control+k');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeFocused();
  await page.keyboard.press('Alt+]');
  await expect(page.locator('.window--focused')).toHaveAttribute('aria-label', 'Notes window: First');
  await page.keyboard.press('Alt+]');
  await expect(page.locator('.window--focused')).toHaveAttribute('aria-label', 'Table window: Second');

  await page.getByRole('textbox', { name: 'Message' }).fill('talk');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('.msg--streaming')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Stopped.' })).toBeVisible();
});

test('the main screen with windows open has no serious or critical accessibility violations', async ({ page }) => {
  await loadScript(twoWindows);
  await openApp(page);
  await page.getByRole('textbox', { name: 'Message' }).fill('open two');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Two windows.');
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`)).toEqual([]);
});

test('stacks are separate workspaces; the switcher creates and opens them', async ({ page }) => {
  await loadScript({
    name: 'stacks',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'Only in the first', content: 'x' } }] } },
      { reply: { content: [{ type: 'text', text: 'Done.' }] } },
    ],
  });
  await openApp(page);
  await page.getByRole('textbox', { name: 'Message' }).fill('note');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByRole('region', { name: 'Notes window: Only in the first' })).toBeVisible();

  page.once('dialog', (dialog) => void dialog.accept('Client work'));
  await page.getByRole('combobox', { name: 'Stack' }).selectOption('__new__');
  await expect(page).toHaveURL(/\?stack=s-/);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(page.getByRole('combobox', { name: 'Stack' })).toHaveValue(/^s-/);
  await expect(page.getByRole('region', { name: 'Notes window: Only in the first' })).toHaveCount(0);
  await expect(page.locator('[data-role=user]')).toHaveCount(0);

  await page.getByRole('combobox', { name: 'Stack' }).selectOption({ label: 'My stack' });
  await expect(page).toHaveURL(/\?stack=default/);
  await expect(page.getByRole('region', { name: 'Notes window: Only in the first' })).toBeVisible();
});
