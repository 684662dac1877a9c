// Renders docs/screenshot.png: the main screen after a scripted conversation opened a table, a
// chart of it and notes.
// Run with `npx tsx scripts/screenshot.ts` after a UI change.
import { chromium } from 'playwright-core';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { serveStack } from './lib/serve.mjs';

const fake = await startFakeModel({ port: 0 });
const ID = '{{tool_result:id: (w_[\\w-]+)}}';
fake.load({
  name: 'screenshot',
  turns: [
    {
      reply: {
        content: [
          { type: 'text', text: 'I read your three October invoices and put them in a table.' },
          {
            type: 'tool_use',
            name: 'create_window',
            input: {
              kind: 'table',
              title: 'October invoices',
              columns: [
                { key: 'vendor', label: 'Vendor' },
                { key: 'date', label: 'Date', type: 'date' },
                { key: 'total', label: 'Total', type: 'currency', currency: 'EUR' },
              ],
              rows: [
                { vendor: 'ACME GMBH', date: '2026-10-02', total: 1240.5 },
                { vendor: 'NORTHWIND', date: '2026-10-09', total: 312.8 },
                { vendor: 'GLOBEX AG', date: '2026-10-17', total: 2875 },
              ],
            },
          },
        ],
      },
    },
    { reply: { content: [{ type: 'tool_use', name: 'create_window', input: { kind: 'chart', title: 'Totals by vendor', chart: 'bar', table_id: ID, x: 'vendor', y: ['total'] } }] } },
    {
      reply: {
        content: [
          {
            type: 'tool_use',
            name: 'create_window',
            input: { kind: 'notes', title: 'To check', content: '- **GLOBEX AG** is over €2,500: needs approval\n- NORTHWIND: VAT id changed since September' },
          },
        ],
      },
    },
    { reply: { content: [{ type: 'text', text: 'Totals are charted, and I noted two things to check.' }] } },
  ],
});
const stack = await serveStack({ appPort: 4194, proxyPort: 8808, apiKey: 'test-screenshot-key', upstream: fake.url, quiet: true });
const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
try {
  const page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
  await page.goto(stack.appUrl);
  await page.getByRole('textbox', { name: 'Message' }).fill('Extract my October invoices and chart the totals');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByText('Totals are charted').waitFor();
  // The user nudges the notes a little to the right, as people do.
  const title = await page.locator('[data-window-id]').nth(2).locator('.window-titlebar').boundingBox();
  await page.mouse.move(title!.x + 80, title!.y + 12);
  await page.mouse.down();
  await page.mouse.move(title!.x + 200, title!.y + 40, { steps: 12 });
  await page.mouse.up();
  await page.mouse.click(900, 760);
  await page.waitForTimeout(500);
  await page.waitForTimeout(300);
  await page.screenshot({ path: new URL('../docs/screenshot.png', import.meta.url).pathname });
  console.log('docs/screenshot.png written');
} finally {
  await browser.close();
  await stack.close();
  await fake.close();
}
