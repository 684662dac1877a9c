// canvas.pan_frame_200: frame times while the user pans a canvas holding 200 windows (headless
// Chromium, production build, windows opened by the scripted model through the real proxy).
import { chromium } from 'playwright-core';
import { serveStack } from '../scripts/lib/serve.mjs';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { report, summarise } from './stats.ts';

const WINDOWS = 200;

export async function benchCanvas(): Promise<void> {
  const fake = await startFakeModel({ port: 0 });
  const content = Array.from({ length: WINDOWS }, (_, i) => ({
    type: 'tool_use' as const,
    name: 'create_window',
    input: i % 2 ? { kind: 'notes', title: `Notes ${i}`, content: `## Window ${i}\n\n- a point\n- another point` } : { kind: 'table', title: `Table ${i}`, columns: [{ key: 'a', label: 'A' }, { key: 'b', label: 'B', type: 'number' }], rows: [{ a: 'x', b: 1 }, { a: 'y', b: 2 }] },
  }));
  fake.load({ name: 'bench canvas', turns: [{ reply: { content } }, { reply: { content: [{ type: 'text', text: 'Opened.' }] } }] });
  const stack = await serveStack({ appPort: 4195, proxyPort: 8809, apiKey: 'test-bench-key', upstream: fake.url, quiet: true });
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  try {
    const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    await page.goto(stack.appUrl);
    await page.getByRole('textbox', { name: 'Message' }).fill('open many windows');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Opened.').waitFor({ timeout: 120_000 });
    await page.waitForFunction((n) => document.querySelectorAll('[data-window-id]').length === n, WINDOWS);
    // Zoomed out so every window is on screen while panning: the heavy case.
    await page.getByRole('button', { name: 'Fit View' }).click();
    await page.waitForTimeout(500);
    await page.evaluate(() => {
      const deltas: number[] = [];
      (window as unknown as { __frames: number[] }).__frames = deltas;
      let last = performance.now();
      const tick = (now: number) => {
        deltas.push(now - last);
        last = now;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    const pane = (await page.locator('.react-flow__pane').boundingBox())!;
    for (let sweep = 0; sweep < 4; sweep++) {
      await page.mouse.move(pane.x + pane.width * 0.8, pane.y + pane.height * 0.5);
      await page.mouse.down();
      await page.mouse.move(pane.x + pane.width * 0.2, pane.y + pane.height * 0.4, { steps: 60 });
      await page.mouse.move(pane.x + pane.width * 0.8, pane.y + pane.height * 0.6, { steps: 60 });
      await page.mouse.up();
    }
    const frames = (await page.evaluate(() => (window as unknown as { __frames: number[] }).__frames.slice(2))) as number[];
    // rAF runs at the 60 Hz vsync, so a frame on time measures ~16.7 ms and a late one ~33 ms.
    const late = frames.filter((ms) => ms > 20).length;
    report(summarise('canvas.pan_frame_200', 'ms', frames, { windows: WINDOWS, goal_p95: 16.7, late_frames: late, late_share: Number((late / frames.length).toFixed(3)) }));
  } finally {
    await browser.close();
    await stack.close();
    await fake.close();
  }
}
