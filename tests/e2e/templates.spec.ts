// Stack templates on the real app: a stack made from the shipped Invoice inbox starts with its
// windows, its skill and its memory (the agent's next prompt has both); a template saved from a
// stack with a conversation, an upload and the user's own key holds none of them (the file is
// read byte by byte), and a stack made from that file has the skill and windows it was saved with.
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from './test.ts';
import { assistant, openApp, send } from './app.ts';
import { fakeState, loadScript } from './fake.ts';
import { E2E_PROXY_URL } from './ports.ts';
import { unpackStackFile } from '../support/stack-zip.ts';

const PRIVATE_UPLOAD = 'PRIVATE-UPLOAD-7731 payment terms';
const PRIVATE_CHAT = 'PRIVATE-CHAT-5521';
const API_KEY = 'test-key-e2e-template-9c41d2aa70';

const menu = (page: Page) => page.getByRole('button', { name: /^Stack: / });
const panel = (page: Page) => page.getByRole('region', { name: 'Stacks' });
const windowTitles = (page: Page) => page.locator('.subbar-title');

test.beforeEach(async ({ context }) => {
  // The download path (browsers without the File System Access save picker); the picker cannot be driven.
  await context.addInitScript(() => {
    delete (Window.prototype as { showSaveFilePicker?: unknown }).showSaveFilePicker;
    delete (window as { showSaveFilePicker?: unknown }).showSaveFilePicker;
  });
});

test('a stack from the Invoice inbox template has its windows, skill and memory; a saved template carries no conversation, upload or key', async ({ page }) => {
  await openApp(page);
  await menu(page).click();
  await panel(page).getByRole('button', { name: 'New from template…' }).click();
  const dialog = page.getByRole('dialog', { name: 'New stack from a template' });
  await expect(dialog.getByRole('radio')).toHaveCount(3);
  await expect(dialog.getByRole('radio', { name: /^Invoice inbox/ })).toBeChecked();
  await dialog.getByRole('radio', { name: /^Research notebook/ }).check();
  await expect(dialog.getByRole('textbox', { name: 'Name of the new stack' })).toHaveValue('Research notebook');
  await dialog.getByRole('radio', { name: /^Invoice inbox/ }).check();
  await dialog.getByRole('textbox', { name: 'Name of the new stack' }).fill('Inbox 2026');
  await dialog.getByRole('button', { name: 'Create' }).click();

  // The new stack opens with the template's windows.
  await expect(menu(page)).toHaveAccessibleName('Stack: Inbox 2026');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(windowTitles(page)).toHaveText(['Invoices', 'How this inbox works', 'Tasks']);
  await expect(page.getByRole('region', { name: /How this inbox works/ })).toContainText('Add invoices');
  // One the app ships is its owner's: nothing held, nothing to review.
  await expect(page.getByRole('status', { name: 'Restricted stack' })).toHaveCount(0);

  // Its skill and memory reach the agent.
  await loadScript({ name: 'template stack', turns: [{ reply: { content: [{ type: 'text', text: 'Ready for invoices.' }] } }] });
  await send(page, `hello, ${PRIVATE_CHAT}`);
  await expect(assistant(page).last()).toHaveText('Ready for invoices.');
  const system = JSON.stringify((await fakeState()).requests[0]!.body as { system: unknown });
  expect(system).toContain('- weekly-payables: List the open invoices');
  expect(system).toContain('This stack is an invoice inbox.');

  // The user's own key saved in the stack, then the proxy used again; and an upload.
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('radio', { name: 'Anthropic, with my own key' }).check();
  await page.getByLabel('API key').fill(API_KEY);
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByRole('dialog')).toBeHidden();
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('radio', { name: 'Stackdocs proxy' }).check();
  await page.getByRole('textbox', { name: 'Model endpoint' }).fill(E2E_PROXY_URL);
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByRole('dialog')).toBeHidden();
  await page.getByLabel('Attach files').setInputFiles([{ name: 'terms.txt', mimeType: 'text/plain', buffer: Buffer.from(`${PRIVATE_UPLOAD}\n`) }]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read terms.txt' })).toBeVisible();

  // Saved as a template: the stack stays open, and the file holds none of that.
  await menu(page).click();
  await panel(page).getByRole('button', { name: 'Save as template…' }).click();
  const save = page.getByRole('dialog', { name: 'Save “Inbox 2026” as a template' });
  await save.getByRole('textbox', { name: 'Template name' }).fill('Team inbox');
  await save.getByRole('textbox', { name: 'What it is for' }).fill('Our invoices, our way.');
  const downloaded = page.waitForEvent('download');
  await save.getByRole('button', { name: 'Save template' }).click();
  await expect(save.getByRole('status')).toContainText(/Saved the template “Team inbox” \(.+\): the browser is downloading it\./);
  const download = await downloaded;
  expect(download.suggestedFilename()).toBe('Team inbox.stack');
  const path = test.info().outputPath('team-inbox.stack');
  await download.saveAs(path);
  await save.getByRole('button', { name: 'Close' }).click();
  await expect(menu(page)).toHaveAccessibleName('Stack: Inbox 2026');

  const bytes = readFileSync(path);
  for (const secret of [PRIVATE_UPLOAD, PRIVATE_CHAT, API_KEY, 'Ready for invoices.']) expect(bytes.includes(secret), secret).toBe(false);
  const files = await unpackStackFile(new Uint8Array(bytes));
  for (const secret of [PRIVATE_UPLOAD, PRIVATE_CHAT, API_KEY]) {
    for (const [name, data] of Object.entries(files)) expect(Buffer.from(data).includes(secret), `${secret} in ${name}`).toBe(false);
  }
  const names = Object.keys(files);
  expect(names[0]).toBe('manifest.json');
  expect(names).toContain('stack/.os/skills/weekly-payables/SKILL.md');
  expect(names.filter((name) => /documents\/|ocr\/|transcript|memory\.db|conversation|secrets|\.os\/vm\//.test(name))).toEqual([]);
  expect(JSON.parse(Buffer.from(files['manifest.json']!).toString())).toMatchObject({ stack: { name: 'Team inbox' }, template: { description: 'Our invoices, our way.' } });

  // A stack made from the saved file: the same skill and windows, under the name given.
  await menu(page).click();
  await panel(page).getByRole('button', { name: 'New from template…' }).click();
  const again = page.getByRole('dialog', { name: 'New stack from a template' });
  await again.getByRole('textbox', { name: 'Name of the new stack' }).fill('Inbox 2027');
  await again.getByLabel('Template file to open').setInputFiles(path);
  await expect(menu(page)).toHaveAccessibleName('Stack: Inbox 2027');
  await expect(windowTitles(page)).toHaveText(['Invoices', 'How this inbox works', 'Tasks']);
  // A template file is someone else's: shown, but held until reviewed (its skill among what it brought).
  const banner = page.getByRole('status', { name: 'Restricted stack' });
  await expect(banner).toContainText('This stack came from a template file.');
  await banner.getByRole('button', { name: 'Review…' }).click();
  await expect(page.getByRole('dialog', { name: 'Review this stack' })).toContainText('Offer the skill');
  await page.getByRole('dialog', { name: 'Review this stack' }).getByRole('button', { name: 'Not now' }).click();
  await expect(page.locator('[data-role=user], [data-role=assistant]')).toHaveCount(0);
});
