// What `npm start`, `npm test` and `npm run bench` need on a fresh machine: dependencies and a
// Chromium. Each step is skipped when already done.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', cwd: root, ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

export function step(message) {
  console.log(`\n▸ ${message}`);
}

/** Installs npm dependencies when node_modules is missing or older than package-lock.json. */
export function ensureDependencies() {
  const lock = readFileSync(new URL('package-lock.json', `file://${root}`));
  const hash = createHash('sha256').update(lock).digest('hex');
  const stamp = `${root}node_modules/.stackdocs-lock-hash`;
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === hash && directDependenciesPresent()) return;
  step('Installing dependencies (npm ci)');
  // NODE_ENV=production would make npm leave out the dev dependencies every command here needs.
  const env = { ...process.env };
  delete env.NODE_ENV;
  if (run('npm', ['ci', '--no-audit', '--no-fund'], { env }) !== 0) throw new Error('npm ci failed (see above).');
  writeFileSync(stamp, hash);
}

/** Every package the project names itself is in node_modules (a stray npm command can prune one). */
function directDependenciesPresent() {
  const manifest = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
  const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
  return names.every((name) => existsSync(`${root}node_modules/${name}/package.json`));
}

/** Installs Debian's chromium when it is missing (browser downloads are not available here). */
export function ensureChromium() {
  if (existsSync(chromiumPath)) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Chromium is missing at ${chromiumPath}. Install it with \`sudo apt-get install -y chromium\`, ` +
        'or set CHROMIUM_PATH to a Chromium or Chrome binary.',
    );
  }
  step('Installing Chromium (apt-get install chromium)');
  run('apt-get', ['update', '-qq']);
  if (run('apt-get', ['install', '-y', '-qq', 'chromium'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }) !== 0) {
    throw new Error('apt-get install chromium failed (see above).');
  }
}

/** Generates the invoice fixtures the tests and benchmarks read (a no-op when they are current). */
export function ensureFixtures() {
  step('Invoice fixtures (tests/fixtures/generate.ts; generated once, then cached)');
  if (run('npx', ['tsx', 'tests/fixtures/generate.ts']) !== 0) throw new Error('generating the invoice fixtures failed (see above).');
}

/**
 * Builds the computer's image (vm-images/build.sh; a no-op when the image for the current recipe
 * exists). It needs root: without it, and without an image, the app runs without the computer
 * and this says what to do. Returns whether an image for the current recipe is there.
 */
export function ensureVmImage() {
  const script = `${root}vm-images/build.sh`;
  if (process.env.STACKDOCS_SKIP_VM_IMAGE === '1') return false;
  if (process.getuid?.() !== 0) {
    // build.sh itself says when the image is current; without root it can only report.
    const current = spawnSync('bash', [script, '--check'], { cwd: root, encoding: 'utf8' });
    if (current.status === 0) return true;
    console.log(
      '\n▸ The computer image is not built (it needs root for debootstrap): run `sudo bash vm-images/build.sh` once; ' +
        'until then the app runs without its computer.',
    );
    return false;
  }
  step('Building the computer image when missing (vm-images/build.sh; a few minutes the first time, then cached)');
  if (run('bash', [script]) !== 0) throw new Error('vm-images/build.sh failed (see above).');
  return true;
}
