// The tab hidden, as when the user switches to another tab or window: `document.visibilityState`
// reads `hidden` and `visibilitychange` is sent, which is what the app listens for. (A headless
// page stays visible whatever else is in front of it.)
import type { Page } from 'playwright-core';

export async function hideTab(page: Page): Promise<void> {
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  });
}

/** The tab shown again after hideTab. */
export async function showTab(page: Page): Promise<void> {
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'visible' });
    document.dispatchEvent(new Event('visibilitychange'));
  });
}
