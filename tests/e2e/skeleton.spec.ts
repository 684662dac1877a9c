// The spine end to end: chat -> stack worker -> proxy -> scripted model, and back to the canvas.
import { expect, test, type Request } from './test.ts';
import { startLocalProxy } from '../../cloudflare-proxy/local.mjs';
import { fakeState, loadScript } from './fake.ts';
import { E2E_APP_URL, E2E_PROXY_SECRET } from './ports.ts';
import { assistant, openApp, send } from './app.ts';

test('a chat message streams the scripted reply through the proxy', async ({ page }) => {
  const reply = 'Hello! I am your computer, streaming this reply a few characters at a time.';
  await loadScript({
    name: 'stream',
    turns: [
      {
        expect: {
          last_user_text: 'Say hello',
          headers: { authorization: null, 'x-api-key': E2E_PROXY_SECRET },
          has_tools: ['create_window'],
        },
        reply: { content: [{ type: 'text', text: reply }], chunk_chars: 4, delay_ms: 25, usage: { input_tokens: 120, output_tokens: 30 } },
      },
    ],
  });
  await openApp(page);
  await send(page, 'Say hello');
  await expect(page.locator('[data-role=user]')).toHaveText('Say hello');
  // Seen mid-stream: some text, not all of it, still marked as streaming.
  const streaming = page.locator('.msg--streaming');
  await expect(streaming).toContainText('Hello!');
  const partial = await streaming.innerText();
  expect(partial.length).toBeLessThan(reply.length);
  await expect(assistant(page)).toHaveText(reply);
  await expect(page.locator('.msg--streaming')).toHaveCount(0);
  // Tokens and cost per mission and for the session: 120 in and 30 out at $3 / $15 per million.
  await expect(page.locator('[data-role=usage]')).toHaveText('150 tokens · $0.0008');
  await expect(page.locator('.session-usage')).toHaveText('150 tokens · $0.0008');
  const state = await fakeState();
  expect(state.failures).toEqual([]);
  expect(state.requests).toHaveLength(1);
});

test('a scripted create_window opens a notes window that survives a reload', async ({ page }) => {
  await loadScript({
    name: 'window',
    turns: [
      {
        reply: {
          content: [
            { type: 'text', text: 'Opening your list.' },
            { type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'Shopping list', content: '# Groceries\n\n- milk\n- eggs' } },
          ],
        },
      },
      {
        expect: { tool_result: { contains: 'Opened notes window "Shopping list"', is_error: false } },
        reply: { content: [{ type: 'text', text: 'Your list is on the canvas.' }] },
      },
    ],
  });
  await openApp(page);
  await send(page, 'Make me a shopping list');
  const win = page.getByRole('region', { name: 'Notes window: Shopping list' });
  await expect(win).toBeVisible();
  await expect(win.getByRole('heading', { name: 'Groceries' })).toBeVisible();
  await expect(win.getByRole('listitem')).toHaveText(['milk', 'eggs']);
  await expect(assistant(page).last()).toHaveText('Your list is on the canvas.');
  await expect(page.locator('[data-role=tool]')).toContainText('Opening a notes window: Shopping list');
  expect((await fakeState()).failures).toEqual([]);

  // The user moves the window; the move survives the reload.
  const title = (await win.locator('.window-titlebar').boundingBox())!;
  await page.mouse.move(title.x + 60, title.y + 10);
  await page.mouse.down();
  await page.mouse.move(title.x + 260, title.y + 170, { steps: 10 });
  await page.mouse.up();
  const moved = (await win.boundingBox())!;
  expect(moved.x).toBeGreaterThan(title.x + 150);

  // Resized from its bottom-right handle, too.
  await win.click({ position: { x: 60, y: 60 } });
  const handle = page.locator('.react-flow__resize-control.bottom.right').first();
  const corner = (await handle.boundingBox())!;
  await page.mouse.move(corner.x + corner.width / 2, corner.y + corner.height / 2);
  await page.mouse.down();
  await page.mouse.move(corner.x + 120, corner.y + 80, { steps: 8 });
  await page.mouse.up();
  const sized = (await win.boundingBox())!;
  expect(sized.width).toBeGreaterThan(moved.width + 100);

  // Maximised, it fills the canvas; restored, it is back where the user put it.
  await page.getByRole('button', { name: 'Maximise Shopping list' }).click();
  const canvas = (await page.locator('.canvas').boundingBox())!;
  await expect.poll(async () => (await win.boundingBox())!.width).toBeGreaterThan(canvas.width - 40);
  await page.getByRole('button', { name: 'Restore Shopping list' }).click();
  await expect.poll(async () => Math.round((await win.boundingBox())!.width)).toBe(Math.round(sized.width));

  await page.reload();
  const again = page.getByRole('region', { name: 'Notes window: Shopping list' });
  await expect(again).toBeVisible();
  const restored = (await again.boundingBox())!;
  expect(Math.abs(restored.x - sized.x)).toBeLessThan(1);
  expect(Math.abs(restored.y - sized.y)).toBeLessThan(1);
  expect(Math.abs(restored.width - sized.width)).toBeLessThan(1);
  expect(Math.abs(restored.height - sized.height)).toBeLessThan(1);
  await again.getByRole('button', { name: 'Close Shopping list' }).click();
  await expect(page.getByRole('region', { name: 'Notes window: Shopping list' })).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(page.getByRole('region', { name: 'Notes window: Shopping list' })).toHaveCount(0);
});

test('upstream 500s end with a clear error, and the app keeps working', async ({ page }) => {
  await loadScript({
    name: '500',
    turns: [
      { reply: { error: { status: 500, message: 'upstream exploded' } }, repeat: 3 },
      { reply: { content: [{ type: 'text', text: 'Back to normal.' }] } },
    ],
  });
  await openApp(page);
  await send(page, 'Try something');
  const error = page.locator('[data-role=error]');
  await expect(error).toContainText('The model service failed (500): upstream exploded');
  await expect(page.locator('[data-role=notice]')).toHaveCount(2); // two retries, then the error
  // Retry sends the same message again.
  await page.locator('[data-role=error]').getByRole('button', { name: 'Retry' }).click();
  await expect(assistant(page).last()).toHaveText('Back to normal.');
  await expect(page.locator('[data-role=user]').last()).toHaveText('Try something');
  expect((await fakeState()).failures).toEqual([]);
});

test('a 429 is retried after the server\'s retry-after, then the reply streams', async ({ page }) => {
  await loadScript({
    name: '429',
    turns: [
      { reply: { error: { status: 429, message: 'slow down', headers: { 'retry-after': '1' } } } },
      { reply: { content: [{ type: 'text', text: 'Worth the wait.' }] } },
    ],
  });
  await openApp(page);
  await send(page, 'hello');
  await expect(page.locator('[data-role=notice]')).toContainText('The model is rate limited: slow down Retrying in 1.0 s');
  await expect(assistant(page)).toHaveText('Worth the wait.');
  const state = await fakeState();
  expect(state.failures).toEqual([]);
  expect(state.requests).toHaveLength(2);
});

test('a broken SSE stream shows a clear error, and the app keeps working', async ({ page }) => {
  await loadScript({
    name: 'broken',
    turns: [
      { reply: { content: [{ type: 'text', text: 'This answer will be cut off in the middle.' }], chunk_chars: 4, break_after_events: 6 } },
      { reply: { content: [{ type: 'text', text: 'Complete answer.' }] } },
    ],
  });
  await openApp(page);
  await send(page, 'Tell me something');
  await expect(page.locator('[data-role=error]')).toContainText("The model's reply was cut off");
  await send(page, 'Again please');
  await expect(assistant(page).last()).toHaveText('Complete answer.');
});

test('the page never holds the key', async ({ page, context }) => {
  const requests: Request[] = [];
  context.on('request', (request) => void requests.push(request));
  await loadScript({
    name: 'key',
    turns: [{ expect: { headers: { 'x-api-key': E2E_PROXY_SECRET, authorization: null } }, reply: { content: [{ type: 'text', text: 'ok' }] } }],
  });
  await openApp(page);
  await send(page, 'hi');
  await expect(assistant(page)).toHaveText('ok');
  const seen = await Promise.all(requests.map(async (request) => ({ url: request.url(), headers: await request.allHeaders() })));
  expect(seen.some((r) => r.url.endsWith('/v1/messages'))).toBe(true);
  for (const request of seen) {
    expect(request.headers['x-api-key'], request.url).toBeUndefined();
    expect(JSON.stringify(request.headers)).not.toContain(E2E_PROXY_SECRET);
  }
  const html = await page.evaluate(() => document.documentElement.outerHTML);
  // Read every stored file once the app is gone: its databases hold their files open while it runs.
  await page.goto('/manifest.webmanifest');
  const stored = await page.evaluate(async () => {
    const parts = [JSON.stringify({ ...localStorage })];
    const walk = async (dir: FileSystemDirectoryHandle): Promise<void> => {
      for await (const handle of (dir as unknown as { values(): AsyncIterable<FileSystemHandle> }).values()) {
        if (handle.kind === 'directory') await walk(handle as FileSystemDirectoryHandle);
        else parts.push(await (await (handle as FileSystemFileHandle).getFile()).text());
      }
    };
    await walk(await navigator.storage.getDirectory());
    return parts.join('\n');
  });
  expect(html).not.toContain(E2E_PROXY_SECRET);
  expect(stored).toContain('SQLite format 3');
  expect(stored).not.toContain(E2E_PROXY_SECRET);
  expect((await fakeState()).failures).toEqual([]);
});

test('without a key the chat says how to connect a model, and the rest works', async ({ page }) => {
  const keyless = await startLocalProxy({ port: 0, allowedOrigins: [E2E_APP_URL], localPairing: true });
  try {
    await openApp(page);
    await page.getByRole('button', { name: 'Settings' }).click();
    const endpoint = page.getByRole('textbox', { name: 'Model endpoint' });
    await endpoint.fill('not a url');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await endpoint.fill('ftp://example.com');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('alert').filter({ hasText: 'http:// or https://' })).toBeVisible();
    await endpoint.fill(keyless.url);
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('dialog')).toBeHidden();

    const banner = page.locator('.model-banner');
    await expect(banner).toContainText('No model connected');
    await expect(banner).toContainText('ANTHROPIC_API_KEY');
    // With no model, the recorded demo is offered instead.
    await expect(banner.getByRole('button', { name: 'Play the recorded demo' })).toBeEnabled();
    await send(page, 'hello?');
    await expect(page.locator('[data-role=error]')).toContainText('ANTHROPIC_API_KEY');
    await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
    await page.reload();
    await expect(page.locator('.model-banner')).toContainText('No model connected');
  } finally {
    await keyless.dispose();
  }
});

test('an offline reload still shows the app', async ({ page, context }) => {
  await openApp(page);
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
    }
  });
  await context.setOffline(true);
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Stackdocs' })).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(page.locator('.model-banner')).toContainText('Could not reach the model endpoint');
  await context.setOffline(false);
});

test('a second tab says the stack is open elsewhere and can take it over', async ({ page, context }) => {
  await openApp(page);
  const second = await context.newPage();
  await second.goto('/');
  await expect(second.getByRole('heading', { name: 'This stack is open in another tab' })).toBeVisible();
  await second.getByRole('button', { name: 'Use it here' }).click();
  await expect(second.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(page.getByRole('heading', { name: 'This stack was opened in another tab' })).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Message' })).toHaveCount(0);
});

test('with a model connected, the recorded demo is not offered', async ({ page }) => {
  await openApp(page);
  await expect(page.getByLabel('Model: Model ready')).toBeVisible();
  await expect(page.getByRole('region', { name: 'Getting started' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Play the recorded demo' })).toHaveCount(0);
});

test('the getting-started offer on a new stack can be dismissed for good', async ({ page }) => {
  await openApp(page);
  const start = page.getByRole('region', { name: 'Getting started' });
  await expect(start.getByRole('button', { name: 'Try it with sample documents' })).toBeVisible();
  await start.getByRole('button', { name: 'Dismiss getting started' }).click();
  await expect(start).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(page.getByRole('region', { name: 'Getting started' })).toHaveCount(0);
});
