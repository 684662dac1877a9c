// Renders docs/screenshot.png: the main screen after a scripted conversation opened two windows.
// Run with `npx tsx scripts/screenshot.ts` after a UI change.
import { chromium } from 'playwright-core';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { serveStack } from './lib/serve.mjs';

const fake = await startFakeModel({ port: 0 });
fake.load({
  name: 'screenshot',
  turns: [
    {
      reply: {
        content: [
          { type: 'text', text: 'Here is a plan for the quarter-end close. I put it on the canvas so it stays in view.' },
          {
            type: 'tool_use',
            name: 'create_window',
            input: {
              kind: 'notes',
              title: 'Quarter-end close',
              content: '## This week\n\n1. Collect the **October invoices** from the shared inbox\n2. Extract vendor, totals and tax into one table\n3. Flag anything over **€5,000** for review\n\n## Done\n\n- Bank statements downloaded\n- Receipts scanned',
            },
          },
          {
            type: 'tool_use',
            name: 'create_window',
            input: { kind: 'notes', title: 'Vendors to check', content: '| Vendor | Why |\n| --- | --- |\n| ACME GmbH | VAT id changed |\n| Northwind | duplicate invoice? |' },
          },
        ],
      },
    },
    { reply: { content: [{ type: 'text', text: 'Both windows are open. Drag them wherever you like.' }] } },
  ],
});
const stack = await serveStack({ appPort: 4194, proxyPort: 8808, apiKey: 'test-screenshot-key', upstream: fake.url, quiet: true });
const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  await page.goto(stack.appUrl);
  await page.getByRole('textbox', { name: 'Message' }).fill('Plan my quarter-end close');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByText('Both windows are open.').waitFor();
  // The user moves the second window down a little, as people do.
  const title = await page.locator('[data-window-id]').nth(1).locator('.window-titlebar').boundingBox();
  await page.mouse.move(title!.x + 80, title!.y + 12);
  await page.mouse.down();
  await page.mouse.move(title!.x + 60, title!.y + 80, { steps: 12 });
  await page.mouse.up();
  await page.mouse.click(640, 650);
  await page.waitForTimeout(300);
  await page.screenshot({ path: new URL('../docs/screenshot.png', import.meta.url).pathname });
  console.log('docs/screenshot.png written');
} finally {
  await browser.close();
  await stack.close();
  await fake.close();
}
