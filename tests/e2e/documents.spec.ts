// Uploads: files land in documents/, their text is read in a worker, the agent's context lists
// them and read_ocr returns their pages; bad files are refused with a reason and disturb nothing.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from './test.ts';
import { startLocalProxy } from '../../cloudflare-proxy/local.mjs';
import type { FakeOcrState } from '../fake-model/ocr.ts';
import { SMUDGED, TURNED_SCANS } from '../fixtures/generate.ts';
import { fixture, invoice } from '../support/fixtures.ts';
import { hideTab } from '../support/hide-tab.ts';
import { inputTimingProblems, inputTimingSummary, readInputTiming, recordInputTiming, scriptHeldFrames, TIMED_INPUTS } from '../support/input-timing.ts';
import { longScannedPdf } from '../support/long-scan.ts';
import { jpegToPdf } from '../support/jpeg-pdf.ts';
import { openApp, send } from './app.ts';
import { fakeState, loadScript } from './fake.ts';
import { E2E_APP_URL, E2E_PROXY_SECRET } from './ports.ts';


test('uploads are stored, listed for the agent, and bad files refused one by one', async ({ page }) => {
  await loadScript({
    name: 'attachments',
    turns: [
      {
        expect: { system_contains: 'plain-1.pdf (application/pdf, ready) at documents/plain-1.pdf: PDF "plain-1.pdf", 1 page' },
        reply: { content: [{ type: 'tool_use', name: 'glob', input: { pattern: 'documents/*' } }] },
      },
      {
        expect: { tool_result: { contains: 'documents/x.pdf' } },
        reply: { content: [{ type: 'tool_use', name: 'read_ocr', input: { document: 'plain-1.pdf' } }] },
      },
      {
        // The text layer read in the browser holds the invoice's vendor and total.
        expect: { tool_result: { contains: invoice('plain-1').vendor } },
        reply: { content: [{ type: 'text', text: 'I see your documents.' }] },
      },
    ],
  });
  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await page.getByLabel('Attach files').setInputFiles([
    { name: 'plain-1.pdf', mimeType: 'application/pdf', buffer: fixture('plain-1.pdf') },
    { name: '../../x.pdf', mimeType: 'application/pdf', buffer: fixture('plain-2.pdf') },
    { name: 'fake.pdf', mimeType: 'application/pdf', buffer: Buffer.from('this is not a pdf') },
    { name: 'empty.txt', mimeType: 'text/plain', buffer: Buffer.alloc(0) },
    { name: 'huge.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(30 * 1024 * 1024, 0x25) },
    { name: 'poster.png', mimeType: 'image/png', buffer: pngHeader(30_000, 30_000) },
  ]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Added plain-1.pdf' })).toBeVisible();
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Added x.pdf' })).toBeVisible();
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read plain-1.pdf: 1 page of text.' })).toBeVisible();
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read x.pdf: 1 page of text.' })).toBeVisible();
  const alerts = page.locator('.chat-composer [role=alert]');
  await expect(alerts).toHaveText([
    /fake\.pdf is named like a PDF, but its contents are not/,
    /empty\.txt is empty \(0 bytes\)/,
    /huge\.pdf is 30\.0 MB; the limit is 25 MB per file\./,
    /poster\.png is 30000×30000 pixels; images up to 50 megapixels can be read\./,
  ]);

  await page.getByRole('textbox', { name: 'Message' }).fill('what do I have?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('I see your documents.');
  expect((await fakeState()).failures).toEqual([]);

  // The files are really there, under the stack's user space in OPFS.
  const stored = await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    const docs = await (await (await root.getDirectoryHandle('stacks')).getDirectoryHandle('default')).getDirectoryHandle('documents');
    const names: string[] = [];
    for await (const name of (docs as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
    return names.sort();
  });
  expect(stored).toEqual(['plain-1.pdf', 'plain-1.pdf.txt', 'x.pdf', 'x.pdf.txt']);
});

test('a password-protected PDF and a corrupt one are kept and shown, and their windows say why they cannot be read', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const locked = readFileSync(new URL('../../worker/documents/fixtures/password-protected.pdf', import.meta.url));
  const corrupt = fixture('two-column-2.pdf').subarray(0, 300); // a real PDF's first 300 bytes
  await page.getByLabel('Attach files').setInputFiles([
    { name: 'locked.pdf', mimeType: 'application/pdf', buffer: locked },
    { name: 'torn.pdf', mimeType: 'application/pdf', buffer: corrupt },
  ]);
  const alert = (name: string) => page.getByRole('region', { name: `Document window: ${name}` }).getByRole('alert').first();
  await expect(alert('locked.pdf')).toContainText('password-protected');
  await expect(alert('torn.pdf')).toContainText('torn.pdf could not be read as a PDF');
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Added locked.pdf' })).toBeVisible();
  // After a reload the windows still say so (the pipeline's events are replayed).
  await page.reload();
  await expect(alert('locked.pdf')).toContainText('password-protected');
  await expect(alert('torn.pdf')).toContainText('torn.pdf could not be read as a PDF');
});

/** The first bytes of a PNG whose header claims `width` x `height` pixels. */
function pngHeader(width: number, height: number): Buffer {
  const png = Buffer.alloc(33);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  png.writeUInt32BE(width, 16);
  png.writeUInt32BE(height, 20);
  return png;
}

test('a scanned invoice is read by OCR in the browser, offline; the OCR worker ends when the tab is hidden', async ({ page, context }) => {
  const a1 = invoice('plain-1');
  await loadScript({
    name: 'ocr',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'read_ocr', input: { document: 'plain-1_scan.jpg' } }] } },
      { expect: { tool_result: { contains: a1.vendor } }, reply: { content: [{ type: 'text', text: 'Read it.' }] } },
    ],
  });
  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true }));
  });
  // The OCR engine and its English data come from the app's own cache: no network needed.
  await context.setOffline(true);
  await page.getByLabel('Attach files').setInputFiles([{ name: 'plain-1_scan.jpg', mimeType: 'image/jpeg', buffer: fixture('plain-1_scan.jpg') }]);
  await expect(page.getByRole('region', { name: 'Document window: plain-1_scan.jpg' })).toBeVisible();
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read plain-1_scan.jpg: 1 page of text.' })).toBeVisible({ timeout: 60_000 });
  await context.setOffline(false);
  await page.getByRole('textbox', { name: 'Message' }).fill('what does the scan say?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Read it.');
  expect((await fakeState()).failures).toEqual([]);
  // The OCR worker is kept for the next scan while the tab is in view, and ends once it is hidden
  // (a hidden tab may be discarded next, and it holds 100-200 MB).
  const ocrWorkers = () => page.workers().filter((worker) => worker.url().includes('/ocr/')).length;
  expect(ocrWorkers()).toBe(1);
  await hideTab(page);
  await expect.poll(ocrWorkers, { timeout: 10_000 }).toBe(0);
});

test('a scanned PDF (no text layer) fed sideways is drawn page by page and read upright by OCR', async ({ page }) => {
  const b1 = invoice('two-column-2');
  await loadScript({
    name: 'scanned pdf',
    turns: [
      // The document's description says the page was read turned (a quarter turn back).
      { expect: { system_contains: 'read turned' }, reply: { content: [{ type: 'tool_use', name: 'read_ocr', input: { document: 'scanned_B1.pdf' } }] } },
      { expect: { tool_result: { contains: b1.vendor } }, reply: { content: [{ type: 'text', text: 'Read the scan.' }] } },
    ],
  });
  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const sideways = TURNED_SCANS.find((scan) => scan.invoice === 'two-column-2' && scan.turn !== 180)!;
  const pdf = Buffer.from(jpegToPdf(new Uint8Array(fixture(sideways.file))));
  await page.getByLabel('Attach files').setInputFiles([{ name: 'scanned_B1.pdf', mimeType: 'application/pdf', buffer: pdf }]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read scanned_B1.pdf: 1 page of text.' })).toBeVisible({ timeout: 60_000 });
  await page.getByRole('textbox', { name: 'Message' }).fill('read it');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Read the scan.');
  expect((await fakeState()).failures).toEqual([]);
});

test('a 20-page scanned PDF is read page after page, its progress shown as pages finish, and typing stays quick', async ({ page }) => {
  test.setTimeout(5 * 60_000);
  await page.addInitScript(recordInputTiming, TIMED_INPUTS);
  await openApp(page);
  const started = Date.now();
  const uploadAt = await page.evaluate(() => performance.now());
  let keys = 0;
  // From disk, as a user's picker hands it over: a buffer would be built into a file in the page's
  // main thread by Playwright's own script (a second-long frame no user's upload makes).
  const scratch = mkdtempSync(join(tmpdir(), 'long-scan-'));
  writeFileSync(join(scratch, 'long-scan.pdf'), await longScannedPdf(20));
  await page.getByLabel('Attach files').setInputFiles(join(scratch, 'long-scan.pdf'));
  const window = page.getByRole('region', { name: 'Document window: long-scan.pdf' });
  const bar = window.getByRole('progressbar', { name: 'Reading long-scan.pdf' });
  // The bar moves as pages finish: several different counts are seen before the document is read.
  const seen = new Set<string>();
  const box = page.getByRole('textbox', { name: 'Message' });
  const done = page.locator('[data-role=notice]').filter({ hasText: 'Read long-scan.pdf: 20 pages of text.' });
  while (!(await done.isVisible())) {
    const value = await bar.getAttribute('value', { timeout: 1_000 }).catch(() => null);
    if (value) seen.add(value);
    // A fast typist's pace (ten keys a second), all the time the pages are read.
    await box.pressSequentially('still typing ', { delay: 100 });
    keys += 'still typing '.length;
    await box.fill('');
    expect(Date.now() - started, 'the 20 pages are read within four minutes').toBeLessThan(240_000);
  }
  console.log(`20 scanned pages read in ${((Date.now() - started) / 1000).toFixed(1)} s; progress seen at ${[...seen].join(', ')} pages`);
  expect(seen.size, `progress values seen: ${[...seen].join(', ')}`).toBeGreaterThanOrEqual(4);
  await expect(window.getByText(/Read \d+ of 20 pages/)).toBeHidden();
  const { slow, frames } = await readInputTiming(page);
  console.log(`while reading: ${inputTimingSummary(slow, keys)}; the upload at ${Math.round(uploadAt)}`);
  // The app never holds the page's main thread while pages are read (no long frame of its
  // scripts), and keys answer in under 100 ms (tests/support/input-timing.ts).
  const held = scriptHeldFrames(frames, uploadAt);
  expect(held, `long frames held by scripts: ${JSON.stringify(held)}`).toEqual([]);
  expect(inputTimingProblems(slow.filter((entry) => entry.at > uploadAt), frames, keys)).toEqual([]);
});

test('with Mistral OCR chosen in Settings, a scan is read by Mistral through the proxy', async ({ page }) => {
  const fakeUrl = process.env.E2E_FAKE_URL!;
  // The shared e2e proxy has no Mistral key; this one has both, with the fake behind each route.
  const proxy = await startLocalProxy({
    port: 0,
    upstream: fakeUrl,
    apiKey: E2E_PROXY_SECRET,
    mistralUpstream: fakeUrl,
    mistralApiKey: 'e2e-mistral-key',
    allowedOrigins: [E2E_APP_URL],
    // Like the shared one: the app pairs with it by itself.
    localPairing: true,
  });
  try {
    const marker = 'Read by the fake Mistral: Southern Cross Electrical, total 1,234.00';
    await loadScript({
      name: 'mistral ocr',
      turns: [
        {
          expect: { system_contains: 'Scanned image "plain-1_scan.jpg", 1 page, begins "Read by the fake Mistral' },
          reply: { content: [{ type: 'tool_use', name: 'read_ocr', input: { document: 'plain-1_scan.jpg' } }] },
        },
        { expect: { tool_result: { contains: marker } }, reply: { content: [{ type: 'text', text: 'Mistral read it.' }] } },
      ],
    });
    // After loadScript, which resets the fake OCR too.
    const set = await fetch(`${fakeUrl}/_fake/ocr`, { method: 'POST', body: JSON.stringify({ pages: [marker] }) });
    expect(set.ok).toBe(true);

    await page.goto('/');
    await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('textbox', { name: 'Model endpoint' }).fill(proxy.url);
    const scans = page.getByRole('group', { name: 'Read scans with' });
    await expect(scans.getByRole('radio', { name: 'This browser (offline)' })).toBeChecked();
    await scans.getByRole('radio', { name: 'Mistral OCR, through the proxy' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('dialog')).toBeHidden();

    const scan = fixture('plain-1_scan.jpg');
    await page.getByLabel('Attach files').setInputFiles([{ name: 'plain-1_scan.jpg', mimeType: 'image/jpeg', buffer: scan }]);
    await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read plain-1_scan.jpg: 1 page of text.' })).toBeVisible({ timeout: 30_000 });
    await page.getByRole('textbox', { name: 'Message' }).fill('what does the scan say?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.locator('[data-role=assistant]').last()).toHaveText('Mistral read it.');
    expect((await fakeState()).failures).toEqual([]);

    // One OCR call, with the proxy's Mistral key, carrying the whole image.
    const ocr = (await (await fetch(`${fakeUrl}/_fake/ocr`)).json()) as FakeOcrState;
    expect(ocr.requests).toEqual([
      {
        n: 1,
        authorization: 'Bearer e2e-mistral-key',
        model: 'mistral-ocr-latest',
        document_type: 'image_url',
        mime: 'image/jpeg',
        bytes: scan.byteLength,
        include_image_base64: false,
        problem: null,
      },
    ]);
  } finally {
    await proxy.dispose();
  }
});

test('a German scan is read in German on its own (accents exact), and German then works offline', async ({ page, context }) => {
  const [first, second] = [invoice('german-1'), invoice('german-2')];
  await loadScript({
    name: 'german ocr',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'read_ocr', input: { document: 'german-2_scan.jpg' } }] } },
      { expect: { tool_result: { contains: second.vendor } }, reply: { content: [{ type: 'text', text: `Vendor: ${second.vendor}.` }] } },
    ],
  });
  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true }));
  });
  // The first German page fetches the German data (not precached); the service worker keeps it.
  await page.getByLabel('Attach files').setInputFiles([{ name: 'german-1_scan.jpg', mimeType: 'image/jpeg', buffer: fixture('german-1_scan.jpg') }]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read german-1_scan.jpg: 1 page of text.' })).toBeVisible({ timeout: 90_000 });
  const readText = () =>
    page.evaluate(async () => {
      const stacks = await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks');
      const documents = await (await stacks.getDirectoryHandle('default')).getDirectoryHandle('documents');
      return (await (await documents.getFileHandle('german-1_scan.jpg.txt')).getFile()).text();
    });
  const text = await readText();
  expect(text).toContain(first.vendor);
  // Read again in English only (from its window): the umlauts are lost, as the user would see.
  const readAgain = page.getByRole('region', { name: 'Document window: german-1_scan.jpg' }).getByRole('combobox', { name: 'Read german-1_scan.jpg again in' });
  await readAgain.selectOption('eng');
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read german-1_scan.jpg: 1 page of text.' })).toHaveCount(2, { timeout: 60_000 });
  await expect.poll(readText).not.toContain(first.vendor);
  // Offline, the next German scan is read from the kept data.
  await context.setOffline(true);
  await page.getByLabel('Attach files').setInputFiles([{ name: 'german-2_scan.jpg', mimeType: 'image/jpeg', buffer: fixture('german-2_scan.jpg') }]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read german-2_scan.jpg: 1 page of text.' })).toBeVisible({ timeout: 90_000 });
  await context.setOffline(false);
  await page.getByRole('textbox', { name: 'Message' }).fill('who sent the second one?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText(`Vendor: ${second.vendor}.`);
  expect((await fakeState()).failures).toEqual([]);
});

test('a value OCR was unsure of (a blot over the total) is marked in the table and named to the agent; the user\'s correction clears it', async ({ page }) => {
  const smudged = invoice(SMUDGED.invoice);
  await loadScript({
    name: 'uncertain cells',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'read_ocr', input: { document: SMUDGED.file } }] } },
      {
        reply: {
          content: [{ type: 'tool_use', name: 'save_extraction', input: { document: SMUDGED.file, fields: { vendor: smudged.vendor, invoice_number: smudged.invoice_number, total: smudged.total } } }],
        },
      },
      { expect: { tool_result: { contains: `OCR was unsure of: total ${smudged.total}` } }, reply: { content: [{ type: 'text', text: 'Saved; the total is hard to read, please check it.' }] } },
      { expect: { system_contains: 'OCR was unsure of 1 cell, marked for the user' }, reply: { content: [{ type: 'text', text: 'Only the total is uncertain.' }] } },
      { expect: { last_user_text: 'The user checked and confirmed the value of table "Extracted data"' }, reply: { content: [{ type: 'text', text: 'Thanks, the total is confirmed.' }] } },
    ],
  });
  await openApp(page);
  await page.getByLabel('Attach files').setInputFiles([{ name: SMUDGED.file, mimeType: 'image/jpeg', buffer: fixture(SMUDGED.file) }]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: `Read ${SMUDGED.file}: 1 page of text.` })).toBeVisible({ timeout: 60_000 });
  await send(page, 'extract the invoice');
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Saved; the total is hard to read, please check it.');
  const table = page.getByRole('region', { name: 'Table window: Extracted data' });
  const marked = table.locator('[role=cell][data-uncertain]');
  await expect(marked).toHaveCount(1);
  await expect(marked).toHaveAttribute('aria-description', /OCR was unsure of this value \(\d+% confidence\)/);
  await send(page, 'which values are uncertain?');
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Only the total is uncertain.');
  // The user checks the total against the paper and confirms it: the mark goes.
  await marked.dblclick();
  await table.getByRole('textbox', { name: /Total, row/ }).fill(String(smudged.total));
  await table.getByRole('textbox', { name: /Total, row/ }).press('Enter');
  await expect(table.locator('[role=cell][data-uncertain]')).toHaveCount(0);
  await send(page, 'I checked the total');
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Thanks, the total is confirmed.');
  expect((await fakeState()).failures).toEqual([]);
});
