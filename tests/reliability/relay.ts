// The browser killed while the proxy's relay carries a download into the computer: the disk checks
// clean with e2fsck, what the computer had acknowledged stays, and once the browser is back the
// same download comes through whole (the relay, the device's ticket and its byte count all
// recover from a connection that vanished mid-stream).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { createRandom } from '../fixtures/invoices.ts';
import { checkDiskImage, checkStackDatabases, diskImageIn, disposeProfile, kill, launch, newProfile, newResult, openApp, type ScenarioResult } from './harness.ts';
import { lastToolResult, type Target } from './scenarios.ts';

export interface RelayTarget extends Target {
  /** The test internet's package index (tests/support/test-internet.ts), reached by name through the proxy. */
  indexPort: number;
  /** SHA-256 of its `/files/10mb.bin`. */
  bigFileSha256: string;
}

const script = (fakeUrl: string, name: string, turns: unknown[]) => fetch(`${fakeUrl}/_fake/script`, { method: 'POST', body: JSON.stringify({ name, turns }) });
const bash = (command: string, timeout = 600) => ({ reply: { content: [{ type: 'tool_use', name: 'bash', input: { command, timeout } }] } });
const done = (text: string) => ({ reply: { content: [{ type: 'text', text }] } });

/** Asks the agent to run what `turns` script; resolves with the last tool result once `reply` shows. */
async function agentRuns(page: Page, target: RelayTarget, name: string, turns: unknown[], reply: string, timeout = 300_000): Promise<string> {
  await script(target.fakeUrl, name, [...turns, done(reply)]);
  // The user names the address, as a person asking for a download does: no question is asked for it.
  await page.getByRole('textbox', { name: 'Message' }).fill(`${name}: ${fileUrl(target)}`);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('[data-role=assistant]').filter({ hasText: reply }).waitFor({ timeout });
  return lastToolResult(target.fakeUrl);
}

const fileUrl = (target: RelayTarget) => `http://pkg.index.test:${target.indexPort}/files/10mb.bin`;
const download = (target: RelayTarget, tag: string) =>
  `: ${tag}; s=$(date +%s%N); curl -sS -m 300 -o /root/dl.bin ${fileUrl(target)}; echo "curl=$? MS=$(( ($(date +%s%N) - s) / 1000000 ))"; sha256sum /root/dl.bin`;

export async function killDuringRelayDownload(target: RelayTarget, runs: number, seed: number): Promise<ScenarioResult> {
  const result = newResult('kill while the relay carries a download into the computer');
  const random = createRandom(seed);
  const profile = newProfile();
  const scratch = mkdtempSync(join(tmpdir(), 'stackdocs-relay-'));
  let browser = await launch(profile, target.appUrl);
  let acknowledged = 0;
  let midway = 0;
  let downloadMs = 0;
  try {
    await openApp(browser.page);
    // One download whole first: that the relay carries it, and how long it takes.
    const first = await agentRuns(browser.page, target, 'download once', [bash(`echo ack >> /root/acks && sync && echo "acks: $(wc -l < /root/acks)"`), bash(download(target, 'first'))], 'Downloaded once.', 900_000);
    downloadMs = Number(/MS=(\d+)/.exec(first)?.[1] ?? 0);
    if (!first.includes('curl=0') || !first.includes(target.bigFileSha256)) throw new Error(`the first download did not come through whole: ${first.slice(0, 300)}`);
    acknowledged = 1;
    for (let run = 1; run <= runs; run++) {
      result.runs++;
      const problems: string[] = [];
      const page = browser.page;
      await script(target.fakeUrl, `relay ${run}`, [
        bash('echo ack >> /root/acks && sync && echo "acks: $(wc -l < /root/acks)"'),
        { ...bash(download(target, `run-${run}`)), expect: { tool_result: { contains: 'acks: ' } } },
        done(`Downloaded, run ${run}.`),
      ]);
      await page.getByRole('textbox', { name: 'Message' }).fill(`Download ${fileUrl(target)}, run ${run}`);
      await page.getByRole('button', { name: 'Send' }).click();
      await page.locator('[data-role=tool]').filter({ hasText: `run-${run};` }).waitFor({ timeout: 180_000 });
      const ack = /acks: (\d+)/.exec(await lastToolResult(target.fakeUrl));
      if (ack) acknowledged = Number(ack[1]);
      await page.waitForTimeout(random() * downloadMs * 1.1);
      await kill(browser);
      if (!(await lastToolResult(target.fakeUrl)).includes('curl=')) midway++;

      const image = diskImageIn(profile, scratch);
      const fsck = image ? checkDiskImage(image, scratch) : 'no disk overlay in the profile';
      if (image) rmSync(image, { force: true });
      if (fsck) {
        result.corrupt++;
        problems.push(`disk: ${fsck}`);
      }

      browser = await launch(profile, target.appUrl);
      const started = performance.now();
      try {
        await openApp(browser.page);
        const again = await agentRuns(browser.page, target, `after the kill ${run}`, [bash(`echo "acks: $(wc -l < /root/acks)"; ${download(target, `again-${run}`)}`)], `Checked, run ${run}.`);
        result.slowestMs = Math.max(result.slowestMs, performance.now() - started);
        const found = Number(/acks: (\d+)/.exec(again)?.[1] ?? -1);
        if (found < acknowledged) {
          result.lost += acknowledged - Math.max(found, 0);
          problems.push(`/root/acks has ${found} lines, ${acknowledged} were acknowledged`);
        }
        acknowledged = Math.max(acknowledged, found);
        if (!again.includes('curl=0') || !again.includes(target.bigFileSha256)) problems.push(`the download after the kill did not come through whole: ${again.slice(0, 300)}`);
      } catch (error) {
        result.corrupt++;
        problems.push(`the computer did not answer after the restart: ${(error as Error).message.split('\n')[0]}`);
      }
      const db = await checkStackDatabases(browser.page, 'default', 'SELECT 1;');
      if (db.transcript !== 'ok' || db.memory !== 'ok') {
        result.corrupt++;
        problems.push(`integrity_check: transcript ${db.transcript}, memory ${db.memory}`);
      }
      await openApp(browser.page).catch(() => {});
      if (problems.length) {
        result.failures++;
        result.notes.push(`run ${run}: ${problems.join('; ')}`);
      }
    }
    result.notes.unshift(
      `${runs} kills while a 10 MiB download came through the relay (${downloadMs} ms whole; ${midway} kills mid-download): the disk checked clean with e2fsck each time, ${acknowledged} acknowledged lines kept, and the same download came through whole after every restart; slowest restart to a whole download ${Math.round(result.slowestMs)} ms`,
    );
  } finally {
    await browser.context.close().catch(() => {});
    disposeProfile(profile);
    rmSync(scratch, { recursive: true, force: true });
  }
  return result;
}
