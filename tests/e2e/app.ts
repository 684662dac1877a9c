// What every end-to-end test does with the app: open it until the chat takes input, send a message.
import { expect, type Locator, type Page } from '@playwright/test';

export async function openApp(page: Page): Promise<void> {
  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
}

export async function send(page: Page, text: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

export const assistant = (page: Page) => page.locator('[data-role=assistant]');

/**
 * Types into a terminal window once xterm holds the keyboard. xterm loads with the window (a
 * chunk of its own): keys typed before it is there reach nothing, and a computer that wakes in
 * half a second can be ready before it.
 */
export async function typeInTerminal(page: Page, terminal: Locator, text: string): Promise<void> {
  const input = terminal.locator('.xterm-helper-textarea');
  await input.waitFor({ state: 'attached', timeout: 60_000 });
  await terminal.click();
  await expect(input).toBeFocused();
  await page.keyboard.type(text, { delay: 5 });
}
