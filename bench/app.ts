// app.offline_reload_interactive: with the network off, how long a reload takes until the chat
// can be typed into (measured in the page from navigation start). The online reload is the
// baseline, measured in the same run.
import { chromium, type Page } from 'playwright-core';
import { serveStack } from '../scripts/lib/serve.mjs';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { report, round, summarise } from './stats.ts';

const RUNS = 7;

async function reloadUntilInteractive(page: Page): Promise<number> {
  await page.reload();
  await page.waitForFunction(() => {
    const input = document.querySelector<HTMLTextAreaElement>('#chat-input');
    return input !== null && !input.disabled;
  });
  return page.evaluate(() => performance.now());
}

export async function benchApp(): Promise<void> {
  const fake = await startFakeModel({ port: 0 });
  const stack = await serveStack({ appPort: 4193, proxyPort: 8807, apiKey: 'test-bench-key', upstream: fake.url, quiet: true });
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(stack.appUrl);
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
      if (!navigator.serviceWorker.controller) {
        await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
      }
    });
    const online: number[] = [];
    for (let i = 0; i < RUNS; i++) online.push(await reloadUntilInteractive(page));
    await context.setOffline(true);
    const offline: number[] = [];
    for (let i = 0; i < RUNS; i++) offline.push(await reloadUntilInteractive(page));
    const onlineLine = summarise('app.online_reload_interactive', 'ms', online);
    const offlineLine = summarise('app.offline_reload_interactive', 'ms', offline);
    report({ ...offlineLine, ratio_vs_online: round(offlineLine.value / onlineLine.value) });
    report(onlineLine);
  } finally {
    await browser.close();
    await stack.close();
    await fake.close();
  }
}
