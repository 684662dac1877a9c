// Renders docs/screenshot.png: the main screen after a scripted conversation opened a table, a
// chart of it and notes.
// Run with `npx tsx scripts/screenshot.ts` after a UI change.
import { chromium } from 'playwright-core';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { serveStack } from './lib/serve.mjs';

const fake = await startFakeModel({ port: 0 });
const ID = '{{tool_result:id: (w_[\\w-]+)}}';
// What a turn of this size costs with a warm prompt cache.
const USAGE = { input_tokens: 1800, output_tokens: 160, cache_read_input_tokens: 6200 };
fake.load({
  name: 'screenshot',
  turns: [
    {
      reply: {
        content: [
          { type: 'text', text: 'I read your five October invoices and put them in a table.' },
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
                { key: 'paid', label: 'Paid', type: 'boolean' },
              ],
              rows: [
                { vendor: 'ACME GMBH', date: '2026-10-02', total: 1240.5, paid: true },
                { vendor: 'NORTHWIND', date: '2026-10-09', total: 312.8, paid: true },
                { vendor: 'INITECH', date: '2026-10-14', total: 689.9, paid: false },
                { vendor: 'GLOBEX AG', date: '2026-10-17', total: 2875, paid: false },
                { vendor: 'UMBRELLA', date: '2026-10-23', total: 1530, paid: false },
              ],
            },
          },
        ],
        usage: USAGE,
      },
    },
    { reply: { content: [{ type: 'tool_use', name: 'create_window', input: { kind: 'chart', title: 'Totals by vendor', chart: 'bar', table_id: ID, x: 'vendor', y: ['total'] } }], usage: USAGE } },
    {
      reply: {
        content: [
          {
            type: 'tool_use',
            name: 'create_window',
            input: {
              kind: 'notes',
              title: 'To check',
              content: '**€6,648.20** in October, €5,094.90 still unpaid.\n\n- **GLOBEX AG** is over €2,500: needs approval\n- NORTHWIND: VAT id changed since September',
            },
          },
        ],
        usage: USAGE,
      },
    },
    { reply: { content: [{ type: 'text', text: 'Totals are charted, and I noted two things to check.' }], usage: USAGE } },
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
  // Nothing selected, the pointer out of the way: the canvas as it rests.
  await page.mouse.click(700, 700);
  await page.mouse.move(1000, 400);
  await page.waitForTimeout(600);
  await page.screenshot({ path: new URL('../docs/screenshot.png', import.meta.url).pathname });
  console.log('docs/screenshot.png written');
} finally {
  await browser.close();
  await stack.close();
  await fake.close();
}
