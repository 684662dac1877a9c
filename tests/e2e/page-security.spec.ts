// The page itself: the build's Content-Security-Policy is in force, and what the model (or a
// document) writes is shown as sanitised text whose markup never runs, in the chat and in notes.
import { expect, test } from './test.ts';
import { fakeState, loadScript } from './fake.ts';
import { assistant, openApp, send } from './app.ts';

const HOSTILE = 'Done. <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> [click](javascript:window.__pwned=3) <iframe src="javascript:parent.__pwned=4"></iframe>';

test('the production page carries a strict Content-Security-Policy', async ({ page, request }) => {
  const html = await (await request.get('/')).text();
  const policy = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)"/)?.[1]?.replace(/&#39;/g, "'");
  expect(policy).toBeTruthy();
  const scriptSrc = policy!.split(';').map((part) => part.trim()).find((part) => part.startsWith('script-src'));
  expect(scriptSrc).toBe("script-src 'self' 'wasm-unsafe-eval'");
  expect(policy).toContain("connect-src 'self' http://127.0.0.1:");
  expect(policy).toContain("object-src 'none'");
  // The built page has no inline script of its own.
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  await openApp(page);
});

test('markup in the model\'s words is shown, never run, in the chat and in a notes window', async ({ page }, testInfo) => {
  // The sanitiser parses the markup in an inert document, whose inline handlers Chromium reports
  // as refused by the page's policy: reported, never run (asserted below).
  testInfo.annotations.push({ type: 'csp-violation-expected', description: 'the sanitiser parses hostile markup' });
  await loadScript({
    name: 'hostile markup',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'Report', content: HOSTILE } }] } },
      { reply: { content: [{ type: 'text', text: HOSTILE }] } },
    ],
  });
  await openApp(page);
  await send(page, 'write me a report');
  await expect(assistant(page).last()).toContainText('Done.');
  const notes = page.getByRole('region', { name: 'Notes window: Report' });
  await expect(notes).toContainText('Done.');
  for (const place of [assistant(page).last(), notes]) {
    await expect(place.locator('script, iframe, [onerror]')).toHaveCount(0);
    await expect(place.locator('a[href^="javascript:"]')).toHaveCount(0);
  }
  await expect(page.getByRole('link', { name: 'click' })).toHaveCount(0); // kept as text, without its href
  expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
  expect((await fakeState()).failures).toEqual([]);
});

test('script that gets into the page anyway is refused by the policy', async ({ page }, testInfo) => {
  testInfo.annotations.push({ type: 'csp-violation-expected', description: 'the test injects an inline script' });
  await openApp(page);
  const refused = page.waitForEvent('console', (message) => message.type() === 'error' && message.text().includes('Content Security Policy'));
  const ran = await page.evaluate(async () => {
    const script = document.createElement('script');
    script.textContent = 'window.__inline = 1';
    document.head.append(script);
    const handler = document.createElement('img');
    handler.setAttribute('onerror', 'window.__inline = 2');
    handler.src = 'data:,not an image';
    document.body.append(handler);
    await new Promise((done) => setTimeout(done, 100));
    return (window as { __inline?: number }).__inline ?? null;
  });
  expect(ran).toBeNull();
  expect((await refused).text()).toContain("script-src 'self' 'wasm-unsafe-eval'");
});
