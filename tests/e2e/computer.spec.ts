// The computer, end to end on the production build: the real image in v86 in the browser, its
// disk in OPFS. One browser profile is kept on disk for the whole file, so the disk is copied in
// once and the tests follow each other like a user's days: first open, work, reload, a crash.
// Skipped when the build has no image (vm-images/build.sh needs root).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, expect, test, type BrowserContext, type Page } from './test.ts';
import { chromiumArgs, chromiumPath } from '../support/chromium.ts';
import { startLocalProxy } from '../../cloudflare-proxy/local.mjs';
import { E2E_APP_URL, E2E_PROXY_SECRET, E2E_PROXY_URL } from './ports.ts';
import { fakeState, loadScript } from './fake.ts';
import { send, typeInTerminal } from './app.ts';
import { bundleTestServer } from '../mcp/bundle.ts';
import { makeBulkFiles } from '../support/bulk-files.ts';
import { hideTab, showTab } from '../support/hide-tab.ts';
import { savedState } from '../support/saved-state.ts';
import { REST_AFTER_HIDDEN_MS } from '../../app/computer/hidden-tab.ts';

// The build copies the image into dist/vm/ when it exists (vite.config.ts).
const IMAGE = join(import.meta.dirname, '..', '..', 'vm-images', 'out', 'latest', 'manifest.json');
test.skip(!existsSync(IMAGE), 'no computer image is built (vm-images/build.sh needs root)');
test.describe.configure({ mode: 'serial' });

const profile = mkdtempSync(join(tmpdir(), 'stackdocs-computer-'));
let context: BrowserContext;
let page: Page;

async function launch(): Promise<void> {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    args: chromiumArgs,
    baseURL: E2E_APP_URL,
    viewport: { width: 1280, height: 800 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  // Where a wake or boot spent its time (the stack worker logs its phases): in the test's output.
  page.on('console', (message) => {
    if (/^computer (woke|booted) in/.test(message.text())) console.log(message.text());
  });
  page.on('worker', (worker) => worker.on('console', (message) => {
    if (/^computer (woke|booted) in/.test(message.text())) console.log(message.text());
  }));
  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
}

test.beforeAll(async () => {
  await launch();
});

test.afterAll(async () => {
  await context?.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
});

const terminal = () => page.getByRole('region', { name: 'Terminal: root shell on the computer' });
const chip = () => page.getByRole('status', { name: 'Computer' });

async function openTerminal(): Promise<void> {
  if (!(await terminal().isVisible())) {
    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Terminal' }).click();
  }
  await expect(terminal()).toBeVisible();
}

/** SIGKILLs the browser: no pagehide, no suspend, nothing saved on the way out. */
async function killBrowser(): Promise<void> {
  for (const pid of execFileSync('pgrep', ['-f', `user-data-dir=${profile}`]).toString().trim().split('\n')) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await context.close().catch(() => {});
}

async function waitReady(timeout: number): Promise<string> {
  await expect(chip()).toContainText(/ready/i, { timeout });
  return (await chip().textContent()) ?? '';
}

/** Types a command into the shell and waits for a line the command prints. */
async function run(command: string, expected: RegExp, timeout = 60_000): Promise<string> {
  await typeInTerminal(page, terminal(), `${command}\n`);
  const rows = terminal().locator('.xterm-rows');
  await expect(rows).toContainText(expected, { timeout });
  return (await rows.textContent()) ?? '';
}

test('first open: a terminal shows a root shell where pandas imports; the image is fetched as read, then whole', async () => {
  test.setTimeout(15 * 60_000);
  await openTerminal();
  // The first start fetches the chunks a wake reads and the pristine saved state, then wakes it;
  // the rest of the image comes when read, and in the background.
  console.log(`first start: ${await waitReady(5 * 60_000)}`);
  await run('clear; id -un; echo ROOT-$(id -u)', /ROOT-0/);
  const usage = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
  console.log(`storage after the first shell: ${(usage / 1e6).toFixed(1)} MB`);
  expect(usage).toBeLessThan(600e6); // a whole raw disk per stack took 2,148 MB
  // Each file pandas reads first is fetched then, one chunk after another (~360 of them): 112-130 s
  // here (2026-11-27; 130-180 s before a guest read stopped waiting for its
  // chunk to be stored and the background download for the guest's reads), over 180 s in CI.
  const started = Date.now();
  const text = await run(`python3 -c 'import pandas; print("PANDAS=" + pandas.__version__)'`, /PANDAS=\d+\.\d+\.\d+/, 360_000);
  expect(text).toMatch(/PANDAS=\d+\.\d+/);
  console.log(`first pandas import (its files fetched as read): ${Date.now() - started} ms`);
  // The whole image arrives in the background ("available offline: N%" until then).
  await expect(chip()).not.toContainText(/available offline/, { timeout: 4 * 60_000 });
  const whole = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
  console.log(`storage with the whole image in this browser: ${(whole / 1e6).toFixed(1)} MB`);
  expect(whole).toBeLessThan(600e6);
});

test('online through the proxy: pip installs from a package index, also after a reload; hosts not allowed fail at once', async () => {
  test.setTimeout(18 * 60_000);
  const port = process.env.E2E_INDEX_PORT;
  await openTerminal();
  await waitReady(5 * 60_000);
  // The index is this test's own (tests/support/test-internet.ts), reached by name through the
  // proxy's resolver and its Wisp relay; only the test configuration allows it.
  await run(
    `clear; pip install -q --index-url http://pkg.index.test:${port}/simple/ --trusted-host pkg.index.test tinypkg && python3 -c 'import tinypkg; print("TINY=" + tinypkg.hello())'`,
    /TINY=tinypkg says hi/,
    180_000,
  );
  // npm from a registry on the same host, then the package required by Debian's Node.
  await run(
    `clear; mkdir -p /root/tinyapp && cd /root/tinyapp && npm install --no-audit --no-fund --registry http://pkg.index.test:${port}/npm/ tinynode && node -e 'console.log("NPM=" + require("tinynode").hello())'; cd`,
    /NPM=tinynode says hi/,
    // npm's own start reads hundreds of modules in an emulated 32-bit CPU: 30-60 s on a quiet
    // machine, several minutes beside other jobs; on a machine 4-5x slower than usual it was
    // still starting (past "arborist:ctor") after 6 min.
    600_000,
  );
  // A name the proxy does not allow, and an allowed name that leads to a private address: the
  // proxy's refusal reaches curl as an answer: about a second here, 5.7 s in a loaded CI run (the
  // proxy asks its resolver first), and always before the guest's resolver stops waiting (10 s)
  // or curl's own 30 s.
  for (const [name, marker] of [['elsewhere.test', 'NOTALLOWED'], ['private.index.test', 'PRIVATE']]) {
    const text = await run(
      `clear; s=$(date +%s%N); curl -sS -m 30 http://${name}:${port}/ -o /dev/null; echo "${marker}=$? MS=$(( ($(date +%s%N) - s) / 1000000 ))"`,
      new RegExp(`${marker}=\\d+ MS=\\d+`),
    );
    const [, code, ms] = new RegExp(`${marker}=(\\d+) MS=(\\d+)`).exec(text)!;
    expect(code, text).toBe('6'); // curl: could not resolve host
    expect(Number(ms), text).toBeLessThan(10_000);
    console.log(`${name}: curl failed in ${ms} ms`);
    // The terminal says why, in a line of its own.
    await expect(terminal().locator('.xterm-rows')).toContainText(`[network] ${name}: not allowed by the proxy`);
  }
  // Written through: the marker is printed (quotes split it, so the typed line never matches) after sync.
  await run('clear; sync; echo SYN""CED', /SYNCED/);
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await openTerminal();
  await waitReady(3 * 60_000);
  const started = Date.now();
  await run(`clear; python3 -c 'import tinypkg; print("AGAIN=" + tinypkg.VERSION)'`, /AGAIN=1\.0/);
  console.log(`after the reload, python imported tinypkg in ${Date.now() - started} ms`);
  // npm's install is on the disk too. (Node required it above; starting Node again here took
  // 56-66 s in the browser's emulator and says nothing more about the reload.)
  await run(`clear; grep -o '"name": *"tinynode"' /root/tinyapp/node_modules/tinynode/package.json | sed 's/^/KEPT-/'`, /KEPT-"name": *"tinynode"/);
});

/**
 * Waits until the running computer fetches a file through the proxy: a change of network reaches
 * it within moments (a ticket from the proxy), with no restart and no reload.
 */
async function untilOnline(marker: string): Promise<void> {
  const port = process.env.E2E_INDEX_PORT;
  await expect(async () => {
    await run(`clear; curl -sS -m 10 http://pkg.index.test:${port}/files/hello.txt | sed 's/^/${marker}-/'`, new RegExp(`${marker}-hello`), 15_000);
  }).toPass({ timeout: 60_000 });
}

async function useEndpoint(url: string): Promise<void> {
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('textbox', { name: 'Model endpoint' }).fill(url);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('dialog')).toBeHidden();
}

test('with its proxy stopped, curl and pip fail at once saying the computer is offline', async () => {
  test.setTimeout(6 * 60_000);
  const port = Number(process.env.E2E_INDEX_PORT);
  // A proxy of this test's own, the same as the suite's but for its life: this one gets stopped.
  const own = await startLocalProxy({
    port: 0,
    upstream: process.env.E2E_FAKE_URL!,
    apiKey: E2E_PROXY_SECRET,
    allowedOrigins: [E2E_APP_URL],
    localPairing: true,
    netAllowedHosts: ['*.index.test'],
    netAllowedPorts: [port],
    netAllowPrivate: [process.env.E2E_INDEX_HOST!],
    dnsUpstream: process.env.E2E_DNS_URL!,
  });
  let running = true;
  try {
    // The app pairs with it by itself, and the running computer takes its network at once.
    await openTerminal();
    await waitReady(3 * 60_000);
    await useEndpoint(own.url);
    await untilOnline('VIA-OWN');

    await own.dispose();
    running = false;
    const curl = await run(
      `clear; s=$(date +%s%N); curl -sS -m 30 http://pkg.index.test:${port}/files/hello.txt -o /dev/null; echo "CURLOFF=$? MS=$(( ($(date +%s%N) - s) / 1000000 ))"`,
      /CURLOFF=\d+ MS=\d+/,
    );
    const [, curlCode, curlMs] = /CURLOFF=(\d+) MS=(\d+)/.exec(curl)!;
    expect(curlCode, curl).toBe('6');
    // Answered, not timed out: a lookup the guest's resolver gave up on would take its 10 s
    // (resolv.conf) by itself. 1-4 s here; 8.9 s once on a machine 4-5x slower than usual, where
    // curl's own start in the emulator takes seconds.
    expect(Number(curlMs), curl).toBeLessThan(10_000);
    await expect(terminal().locator('.xterm-rows')).toContainText('[network] pkg.index.test: the computer is offline (the proxy could not be reached)');

    // pip's own log (--log, every line timestamped to the ms) says when it first asked the network
    // and when it gave up: its start and imports in the emulator before that (48-110 s in a loaded
    // run) are not the network's doing.
    const text = await run(
      `clear; rm -f /tmp/pipoff.log; s=$(date +%s%N); pip install -q --no-cache-dir --force-reinstall --log /tmp/pipoff.log --index-url http://pkg.index.test:${port}/simple/ --trusted-host pkg.index.test tinypkg; echo "PIPOFF=$? MS=$(( ($(date +%s%N) - s) / 1000000 ))"; grep -m1 'Looking in indexes' /tmp/pipoff.log | cut -c1-23 | sed "s/^/ASK""ED=/"; tail -n1 /tmp/pipoff.log | cut -c1-23 | sed "s/^/GAVE""UP=/"`,
      /GAVEUP=\d{4}-/,
      300_000, // pip's own start alone took 48-110 s in loaded runs; the network adds seconds at most
    );
    const [, code, ms] = /PIPOFF=(\d+) MS=(\d+)/.exec(text)!;
    expect(code, text).not.toBe('0');
    await expect(terminal().locator('.xterm-rows')).toContainText('[network] pkg.index.test: the computer is offline (the proxy could not be reached)');
    const stamp = (name: string) => {
      const [, date, millis] = new RegExp(`${name}=(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d),(\\d{3})`).exec(text) ?? [];
      expect(date, `pip's log has no ${name} line: ${text}`).toBeTruthy();
      return Date.parse(`${date}.${millis}Z`);
    };
    const network = stamp('GAVEUP') - stamp('ASKED');
    console.log(`proxy stopped: curl failed in ${curlMs} ms, pip in ${ms} ms, ${network} ms of it from its first ask of the index to giving up`);
    // The network costs pip seconds (its three tries, their back-off and its network stack's
    // imports: 2-15 s in loaded runs), never a wait on timeouts: a DNS lookup that timed out would
    // cost 10 s (the guest's resolv.conf) for each try, 30 s in all, a connect timeout 15 s a try.
    expect(network, text).toBeLessThan(20_000);
  } finally {
    if (running) await own.dispose();
    await useEndpoint(E2E_PROXY_URL);
    await untilOnline('VIA-SUITE');
  }
});

test('with the network turned off for the stack, curl and the bash tool fail at once and say so', async () => {
  test.setTimeout(8 * 60_000);
  const port = process.env.E2E_INDEX_PORT;
  const setNetwork = async (on: boolean) => {
    await page.getByRole('button', { name: 'Settings' }).click();
    const allowed = page.getByRole('region', { name: 'Network' }).getByRole('switch', { name: 'The computer may use the network' });
    // A controlled switch: it shows the new state once the stack saved it.
    if ((await allowed.isChecked()) !== on) await allowed.click();
    await expect(allowed).toBeChecked({ checked: on });
    await expect(allowed).toBeEnabled();
    await page.getByRole('button', { name: 'Cancel' }).click();
  };
  await openTerminal();
  await waitReady(3 * 60_000);
  // Online, a download that never ends runs in the background; turning the network off (no
  // restart, no reload) ends it, long before curl's own 300 s. The guest waits up to a minute for
  // each step: on a machine 4-5x slower than usual curl's start alone (its libraries read from a
  // disk still arriving) took over the 10 s these loops allowed before.
  await run(
    `clear; rm -f /tmp/endless.*; (curl -sSN -m 300 http://pkg.index.test:${port}/files/endless -o /tmp/endless.out; echo "ENDLESS=$?" > /tmp/endless.exit) >/dev/null 2>&1 & for i in $(seq 1 240); do [ -s /tmp/endless.out ] && break; sleep 0.25; done; head -c 7 /tmp/endless.out; echo`,
    /started/,
    120_000,
  );
  await setNetwork(false);
  try {
    const cut = await run(`clear; for i in $(seq 1 240); do [ -s /tmp/endless.exit ] && break; sleep 0.25; done; cat /tmp/endless.exit`, /ENDLESS=\d+/, 120_000);
    const ended = /ENDLESS=(\d+)/.exec(cut)![1]!;
    expect(ended, cut).not.toMatch(/^(0|28)$/); // ended by the network, not finished or timed out
    console.log(`network off: the open download ended (curl exit ${ended})`);
    const text = await run(
      `clear; s=$(date +%s%N); curl -sS -m 30 http://pkg.index.test:${port}/files/hello.txt -o /dev/null; echo "OFF=$? MS=$(( ($(date +%s%N) - s) / 1000000 ))"`,
      /OFF=\d+ MS=\d+/,
    );
    const [, code, ms] = /OFF=(\d+) MS=(\d+)/.exec(text)!;
    expect(code, text).toBe('6');
    expect(Number(ms), text).toBeLessThan(5_000);
    console.log(`network off: curl failed in ${ms} ms`);
    await expect(terminal().locator('.xterm-rows')).toContainText('[network] pkg.index.test: the computer is offline (its network is turned off for this stack in Settings)');
    // An address, not a name: refused at once too.
    const direct = await run(`clear; curl -sS -m 30 http://192.0.2.10/ -o /dev/null; echo "DIRECT=$?"`, /DIRECT=\d+/);
    expect(direct).toMatch(/DIRECT=7/); // curl: could not connect

    await loadScript({
      name: 'network off',
      turns: [
        { reply: { content: [{ type: 'tool_use', name: 'bash', input: { command: `curl -sS -m 20 http://pkg.index.test:${port}/ -o /dev/null; echo CURL=$?` } }] } },
        {
          expect: { tool_result: { contains: 'Network: pkg.index.test: the computer is offline (its network is turned off for this stack in Settings)' } },
          reply: { content: [{ type: 'text', text: 'The network is off for this stack.' }] },
        },
      ],
    });
    await send(page, 'fetch the index page from pkg.index.test');
    await expect(page.locator('[data-role=assistant]').last()).toHaveText('The network is off for this stack.', { timeout: 120_000 });
    expect((await fakeState()).failures).toEqual([]);
  } finally {
    await setNetwork(true);
    await untilOnline('ON-AGAIN');
  }
});

test('the agent hears why the network refused: the bash result names the host and the reason', async () => {
  test.setTimeout(3 * 60_000);
  const port = process.env.E2E_INDEX_PORT;
  await loadScript({
    name: 'network refusal',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'bash', input: { command: `curl -sS -m 20 http://elsewhere.test:${port}/ -o /dev/null; echo CURL=$?` } }] } },
      {
        expect: { tool_result: { contains: 'Network: elsewhere.test: not allowed by the proxy: elsewhere.test is not a host this proxy lets the computer reach' } },
        reply: { content: [{ type: 'text', text: 'The proxy does not allow that host.' }] },
      },
    ],
  });
  await send(page, 'fetch the page from elsewhere.test');
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('The proxy does not allow that host.', { timeout: 120_000 });
  expect((await fakeState()).failures).toEqual([]);
});

test('the agent works on the computer: python, write, edit, grep, a table; the VM sees the edits', async () => {
  test.setTimeout(5 * 60_000);
  await loadScript({
    name: 'computer mission',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'bash', input: { command: `python3 -c 'import sys; print("py", sum(range(10)), sys.version_info[0])'` } }] } },
      {
        expect: { tool_result: { contains: 'py 45 3', is_error: false } },
        reply: { content: [{ type: 'tool_use', name: 'write', input: { path: 'artifacts/totals.csv', content: 'vendor,total\nacme,10\nglobex,20\n' } }] },
      },
      {
        expect: { tool_result: { contains: 'Wrote', is_error: false } },
        reply: { content: [{ type: 'tool_use', name: 'edit', input: { path: 'artifacts/totals.csv', old_string: 'globex,20', new_string: 'globex,32' } }] },
      },
      {
        expect: { tool_result: { is_error: false } },
        reply: { content: [{ type: 'tool_use', name: 'grep', input: { pattern: 'globex', path: 'artifacts' } }] },
      },
      {
        expect: { tool_result: { contains: 'globex,32', is_error: false } },
        reply: { content: [{ type: 'tool_use', name: 'bash', input: { command: `python3 - <<'EOF'\nimport pandas as pd\ndf = pd.read_csv('/workspace/artifacts/totals.csv')\nprint('SUM', df.total.sum())\ndf.to_csv('/workspace/artifacts/from-vm.csv', index=False)\nEOF` } }] },
      },
      {
        expect: { tool_result: { contains: 'SUM 42', is_error: false } },
        reply: { content: [{ type: 'tool_use', name: 'read', input: { path: 'artifacts/from-vm.csv' } }] },
      },
      {
        expect: { tool_result: { contains: 'globex,32', is_error: false } },
        reply: {
          content: [
            {
              type: 'tool_use',
              name: 'create_window',
              input: {
                kind: 'table',
                title: 'Totals',
                columns: [
                  { key: 'vendor', label: 'Vendor', type: 'text' },
                  { key: 'total', label: 'Total', type: 'number' },
                ],
                rows: [
                  { vendor: 'acme', total: 10 },
                  { vendor: 'globex', total: 32 },
                ],
              },
            },
          ],
        },
      },
      { expect: { tool_result: { is_error: false } }, reply: { content: [{ type: 'text', text: 'The totals are in the table: 42 in all.' }] } },
    ],
  });
  await send(page, 'total the vendors with python');
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('The totals are in the table: 42 in all.', { timeout: 4 * 60_000 });
  expect((await fakeState()).failures).toEqual([]);
  await expect(page.getByRole('table', { name: 'Totals' })).toContainText('globex');
});

test('hooks: a guard blocks rm under /workspace/archive with its reason, a post-write hook is kept in the transcript, a hanging hook is killed', async () => {
  test.setTimeout(6 * 60_000);
  await openTerminal();
  await waitReady(5 * 60_000);
  // Written as a user would in Settings: plain shell in the computer, the event as JSON on stdin.
  const hooks = {
    hooks: {
      PreToolUse: [
        { matcher: 'bash', hooks: [{ type: 'command', command: `case "$(cat)" in *'"rm '*/workspace/archive*) echo '/workspace/archive is read-only: nothing there may be removed' >&2; exit 2;; esac`, timeout: 20 }] },
        { matcher: 'glob', hooks: [{ type: 'command', command: 'sleep 600', timeout: 3 }] },
      ],
      PostToolUse: [{ matcher: 'write', hooks: [{ type: 'command', command: `f=$(sed -n 's/.*"path":"\\([^"]*\\)".*/\\1/p'); echo "post-write check: $(wc -c < "/workspace/$f") bytes in $f"` }] }],
    },
  };
  const saveHooks = async (text: string, said: RegExp) => {
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('textbox', { name: 'Hooks file (JSON)' }).fill(text);
    await page.getByRole('button', { name: 'Apply hooks' }).click();
    await expect(page.getByRole('region', { name: 'Hooks' }).getByRole('status')).toHaveText(said);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByRole('dialog')).toBeHidden();
  };
  // A mistake is refused with where it is, and nothing changes.
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('textbox', { name: 'Hooks file (JSON)' }).fill('{"hooks": {"BeforeTool": []}}');
  await page.getByRole('button', { name: 'Apply hooks' }).click();
  await expect(page.getByRole('region', { name: 'Hooks' }).getByRole('alert')).toContainText('hooks: unknown key "BeforeTool"');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await saveHooks(JSON.stringify(hooks, null, 2), /Saved: 3 hooks\./);
  try {
    await loadScript({
      name: 'hooks',
      turns: [
        { reply: { content: [{ type: 'tool_use', name: 'bash', input: { command: 'mkdir -p /workspace/archive && echo kept > /workspace/archive/2024.txt && echo MADE' } }] } },
        {
          expect: { tool_result: { contains: 'MADE', is_error: false } },
          reply: { content: [{ type: 'tool_use', name: 'bash', input: { command: 'rm -rf /workspace/archive/2024.txt' } }] },
        },
        {
          expect: { tool_result: { contains: 'Not run. A hook blocked this call: /workspace/archive is read-only: nothing there may be removed', is_error: true } },
          reply: { content: [{ type: 'tool_use', name: 'write', input: { path: 'artifacts/hooked.md', content: '# Checked\n' } }] },
        },
        {
          expect: { tool_result: { contains: 'Wrote', is_error: false } },
          reply: { content: [{ type: 'tool_use', name: 'glob', input: { pattern: 'artifacts/*.md' } }] },
        },
        {
          expect: { tool_result: { contains: 'The before-tool hook `sleep 600` could not decide (did not finish within its 3 s)', is_error: true } },
          reply: { content: [{ type: 'text', text: 'The archive is protected.' }] },
        },
      ],
    });
    await send(page, 'clear out the 2024 archive');
    await expect(page.locator('[data-role=assistant]').last()).toHaveText('The archive is protected.', { timeout: 180_000 });
    expect((await fakeState()).failures).toEqual([]);

    const hookRows = page.locator('[data-role=hook]');
    await expect(hookRows).toHaveCount(4);
    await expect(hookRows.nth(1)).toContainText('Hook before bash: blocked the call');
    await expect(hookRows.nth(2)).toContainText('Hook after write: ran');
    await expect(hookRows.nth(3)).toContainText('Hook before glob: killed at its time limit');
    // The hook's output is in the transcript: there after a reload, rebuilt from the stored events.
    await page.reload();
    await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
    const postWrite = page.locator('[data-role=hook]').nth(2);
    await postWrite.locator('summary').click();
    await expect(postWrite).toContainText('post-write check: 10 bytes in artifacts/hooked.md');

    // The file the guard kept is there, and the hanging hook's sleep was killed with it.
    await openTerminal();
    await waitReady(2 * 60_000);
    await run('clear; cat /workspace/archive/2024.txt; pgrep -x sleep || echo NO-SLEEP', /kept\s*NO-SLEEP/);
  } finally {
    await saveHooks('', /Saved: no hooks\./);
  }
});

test('an MCP server of the user\'s, written with the official SDK, runs in the computer over stdio: listed, asked about once, called; killed mid-call it says so, and the next call finds it started again', async () => {
  // Node starts slowly in the emulated CPU (docs/mcp.md: this 714 KB server takes 25-110 s to
  // answer), and the test starts it twice: once added, once after the kill.
  test.setTimeout(12 * 60_000);
  await openTerminal();
  await waitReady(5 * 60_000);
  // The user drops their server's file into the stack, then adds it by its command.
  await page.getByLabel('Attach files').setInputFiles([{ name: 'register.mjs', mimeType: 'text/javascript', buffer: readFileSync(await bundleTestServer()) }]);
  await run('clear; test -s /workspace/documents/register.mjs && echo SERVER-FILE-THERE', /SERVER-FILE-THERE/, 120_000);
  await page.getByRole('button', { name: 'Settings' }).click();
  const section = page.getByRole('region', { name: 'MCP servers' });
  await section.getByLabel('Server name').fill('register');
  await section.getByLabel('Command or URL').fill('node /workspace/documents/register.mjs');
  await section.getByRole('button', { name: 'Add server' }).click();
  await expect(section.getByRole('status')).toHaveText('Added register: it starts now.');
  const register = section.getByRole('listitem', { name: 'MCP server register' });
  const started = Date.now();
  await expect(register.locator('.mcp-state')).toHaveText('Running', { timeout: 4 * 60_000 });
  console.log(`the stdio MCP server answered ${((Date.now() - started) / 1000).toFixed(1)} s after it was added`);
  await expect(register).toContainText('node /workspace/documents/register.mjs');
  await expect(register).not.toContainText('(remote)');
  await expect(register.getByRole('list', { name: 'Tools of register' })).toContainText('vat_number');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('dialog')).toBeHidden();

  try {
    await loadScript({
      name: 'stdio mcp',
      turns: [
        { reply: { content: [{ type: 'tool_use', name: 'mcp__register__vat_number', input: { company: 'Initech' } }] } },
        {
          expect: { tool_result: { contains: 'Initech: GB', is_error: false } },
          reply: { content: [{ type: 'tool_use', name: 'mcp__register__wait', input: { seconds: 600 } }] },
        },
        {
          expect: { tool_result: { contains: 'It is being started again; the call can be tried again.', is_error: true } },
          reply: { content: [{ type: 'tool_use', name: 'mcp__register__vat_number', input: { company: 'Globex' } }] },
        },
        {
          expect: { tool_result: { contains: 'Globex: GB', is_error: false } },
          reply: { content: [{ type: 'text', text: 'Initech and Globex are both registered.' }] },
        },
      ],
    });
    await send(page, 'look up Initech, then Globex');
    // The first call of each tool asks; a yes holds for that tool while the stack is open.
    const prompts = page.getByRole('group', { name: 'Permission request' });
    for (const n of [1, 2]) {
      await expect(prompts).toHaveCount(n, { timeout: 60_000 });
      await expect(prompts.last()).toContainText('A tool of an MCP server you connected');
      await prompts.last().getByRole('button', { name: 'Allow', exact: true }).click();
    }
    const waiting = page.locator('[data-role=tool]').filter({ hasText: 'Asking register: wait' });
    await expect(waiting).toBeVisible();
    // The call is under way: its server is killed from the terminal, as a crash would end it.
    await page.waitForTimeout(2000);
    await run('clear; pkill -KILL -f documents/register.mjs && echo KILLED-SERVER', /KILLED-SERVER/);
    await expect(page.locator('[data-role=assistant]').last()).toHaveText('Initech and Globex are both registered.', { timeout: 5 * 60_000 });
    expect((await fakeState()).failures).toEqual([]);
    await expect(prompts).toHaveCount(2);
    const results = await page.locator('[data-role=tool]').filter({ hasText: 'Asking register: vat_number' }).allTextContents();
    expect(results).toHaveLength(2);
  } finally {
    // Later tests count the computer's processes and time its saves: the server goes.
    await page.getByRole('button', { name: 'Settings' }).click();
    await section.getByRole('listitem', { name: 'MCP server register' }).getByRole('button', { name: 'Remove register' }).click();
    await expect(section.getByRole('listitem', { name: 'MCP server register' })).toHaveCount(0);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  }
});

test('Stop ends a running command on the computer', async () => {
  test.setTimeout(3 * 60_000);
  await loadScript({
    name: 'stop a command',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'bash', input: { command: 'echo STARTED-LONG; sleep 600; echo never' } }] } },
      { reply: { content: [{ type: 'text', text: 'Fresh start.' }] } },
    ],
  });
  await send(page, 'run the long job');
  // The command's output streams into the tool's details while it runs.
  const tool = page.locator('[data-role=tool]').filter({ hasText: 'Running echo STARTED-LONG' }).last();
  await tool.locator('summary').click();
  await expect(tool.locator('[data-role=tool-output]')).toContainText('STARTED-LONG', { timeout: 60_000 });
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Stopped.' }).last()).toBeVisible();
  await openTerminal();
  await run('clear; pgrep -x sleep >/dev/null && echo SLEEP-ALIVE || echo SLEEP-GONE', /SLEEP-(GONE|ALIVE)/);
  await expect(terminal().locator('.xterm-rows')).toContainText('SLEEP-GONE');
});

test('a 10 MB file the worker stores is byte-identical in the VM', async () => {
  test.setTimeout(3 * 60_000);
  const rows = ['id,value'];
  for (let i = 0; rows.join('\n').length < 10 * 1024 * 1024; i++) rows.push(...Array.from({ length: 1000 }, (_, j) => `${i * 1000 + j},${((i * 1000 + j) * 2654435761) % 1000003}`));
  const bytes = Buffer.from(rows.join('\n').slice(0, 10 * 1024 * 1024));
  const md5 = createHash('md5').update(bytes).digest('hex');
  await page.getByLabel('Attach files').setInputFiles([{ name: 'big.csv', mimeType: 'text/csv', buffer: bytes }]);
  await openTerminal();
  await run('clear; md5sum /workspace/documents/big.csv | sed "s/^/MD5=/"', new RegExp(`MD5=${md5}`), 60_000);
});

/** The saved state once the computer is at rest (its state has matched its disk for 10 s), other than `after`. */
async function savedAtRest(after: string | null = null): Promise<{ generation: string; size: number }> {
  let still: { generation: string; since: number; size: number } | null = null;
  await expect
    .poll(
      async () => {
        const saved = await savedState(page);
        if (saved === null || saved.generation === after) still = null;
        else if (still?.generation !== saved.generation) still = { ...saved, since: Date.now() };
        return still !== null && Date.now() - still.since >= 10_000;
      },
      { timeout: 90_000, intervals: [1_000] },
    )
    .toBe(true);
  return { generation: still!.generation, size: still!.size };
}

test('200 MB of files in /workspace: the guest lists and hashes every one, and the saved state does not grow with them', async () => {
  test.setTimeout(8 * 60_000);
  await openTerminal();
  await waitReady(3 * 60_000);
  await run('clear; ls /workspace >/dev/null; echo BEFORE-"BULK"', /BEFORE-BULK/);
  const before = await savedAtRest();
  // Ten files of 20 MB, each its own bytes, put in the stack's folder as an import leaves them.
  const listing = await page.evaluate(makeBulkFiles, { folder: ['stacks', 'default', 'bulk'], files: 10, mb: 20 });
  const all = createHash('sha256').update(listing).digest('hex');
  const began = Date.now();
  await run('clear; cd /workspace/bulk && echo "FILES=$(ls -la | grep -c \' part-\')" && echo "ALL=$(sha256sum part-* | sha256sum | cut -c1-64)"; cd /', new RegExp(`FILES=10[\\s\\S]*ALL=${all}`), 5 * 60_000);
  console.log(`the guest listed and hashed 200 MB of /workspace in ${Date.now() - began} ms`);
  const after = await savedAtRest(before.generation);
  console.log(`saved state: ${(before.size / 1e6).toFixed(1)} MB before the files, ${(after.size / 1e6).toFixed(1)} MB after`);
  expect(after.size - before.size).toBeLessThan(10e6);
  // Removed by the guest, gone from the stack's folder.
  await run('clear; rm -r /workspace/bulk && echo BULK-"GONE"', /BULK-GONE/);
  const left = await page.evaluate(async () => {
    const dir = await (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')).getDirectoryHandle('default');
    return dir.getDirectoryHandle('bulk').then(() => true, () => false);
  });
  expect(left).toBe(false);
});

test('a file written in the VM survives a reload, and the computer wakes where it was, not booting again', async () => {
  test.setTimeout(4 * 60_000);
  await openTerminal();
  await run('clear; echo kept-7f3a > /root/keep.txt && sync && echo WROTE', /WROTE/);
  // The machine saves itself a few seconds after the last command or disk write (at most every
  // 15 s). The reload comes once it is at rest: its saved state has matched its disk for 10 s
  // (machine.json says so). The guest may write once more a few seconds after a save, and a reload
  // in that moment cold boots: the page cannot wait for a save while it unloads.
  await savedAtRest();
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const status = await waitReady(60_000);
  console.log(`after a reload: ${status}`);
  const wake = /woke in ([\d.]+) s/.exec(status);
  expect(wake, `the status says the computer woke, and how long it took: "${status}"`).not.toBeNull();
  // How fast is a benchmark's to say (vm.wake, under a second, in docs/performance.md): on a
  // shared 2-core runner this same wake has read 0.4-1.0 s. A cold boot takes 20 s and more, so
  // three seconds still tells a wake that lost its way from one that did not.
  expect(Number(wake![1]) * 1000).toBeLessThan(3000);
  await openTerminal();
  await run('clear; cat /root/keep.txt | sed "s/^/GOT=/"', /GOT=kept-7f3a/);
});

test('a frozen tab that is then discarded (ChromeOS under memory pressure) wakes where it was, with the command\'s output', async () => {
  test.setTimeout(6 * 60_000);
  await openTerminal();
  await waitReady(3 * 60_000);
  await run('clear; echo "frozen-$((7*6))" > /workspace/before-freeze.txt; echo system-side > /root/before-freeze.txt; sync; echo FROZE-READY', /FROZE-READY/);
  // The browser freezes the page (a background tab under memory pressure), then discards it.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Page.setWebLifecycleState', { state: 'frozen' });
  await new Promise((resolve) => setTimeout(resolve, 20_000));
  await killBrowser();
  await launch();
  await openTerminal();
  const status = await waitReady(3 * 60_000);
  console.log(`after the freeze and discard: ${status}`);
  expect(status, 'saved before the discard: a wake, not a boot').toMatch(/woke in/);
  await run('clear; cat /workspace/before-freeze.txt /root/before-freeze.txt | tr "\\n" " "; echo', /frozen-42 system-side/);
});

test('hidden a while, an idle computer is suspended (its memory given back), not one running a job; shown again it wakes where it was', async () => {
  test.setTimeout(5 * 60_000);
  await openTerminal();
  await waitReady(3 * 60_000);
  // A shell variable lives only in the guest's memory: it is there after a wake, not after a boot.
  await run('clear; HELD=ram-5e1; echo SET-"$HELD"', /SET-ram-5e1/);
  // A job left running in the terminal keeps the computer up while hidden.
  await typeInTerminal(page, terminal(), 'sleep 600\n');
  await hideTab(page);
  await page.waitForTimeout(REST_AFTER_HIDDEN_MS + 10_000);
  await expect(chip()).toContainText(/ready/i);
  await showTab(page);
  await terminal().click();
  await page.keyboard.press('Control+C');
  await run('clear; echo AFTER-"SLEEP"', /AFTER-SLEEP/);
  // Nothing running: hidden a while, it is suspended.
  await hideTab(page);
  await expect(chip()).toContainText(/suspended/i, { timeout: REST_AFTER_HIDDEN_MS + 30_000 });
  await showTab(page);
  const status = await waitReady(60_000);
  console.log(`shown again: ${status}`);
  expect(status).toMatch(/woke in/);
  await run('clear; echo "GOT-$HELD"', /GOT-ram-5e1/);
});

// A browser killed while the computer writes is reliability.spec's: a cold boot, the disk checked
// with e2fsck, and every acknowledged write kept.
