// The local proxy's owner token, device store and address, kept under .cache/proxy/ so `npm run
// pair` (a separate process) can hand out codes for the proxy `npm start` runs, on whatever port it
// was given, and pairings survive restarts.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './setup.mjs';

/** PROXY_STATE_DIR moves it (as for `node cloudflare-proxy/local.mjs`); tests use their own. */
export const proxyStateDir = process.env.PROXY_STATE_DIR || join(root, '.cache', 'proxy');
const tokenFile = join(proxyStateDir, 'owner-token');
/** The URL of the proxy `npm start` is running, while it runs. */
const urlFile = join(proxyStateDir, 'url');

/** The local owner token, made once (readable by this user only). */
export function localOwnerToken() {
  if (existsSync(tokenFile)) return readFileSync(tokenFile, 'utf8').trim();
  mkdirSync(proxyStateDir, { recursive: true });
  const token = `sdk_owner_${randomBytes(24).toString('base64url')}`;
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  return token;
}

/** The token `npm run pair` uses: OWNER_TOKEN, else the local one if `npm start` made it. */
export function ownerTokenForPairing() {
  if (process.env.OWNER_TOKEN) return process.env.OWNER_TOKEN;
  return existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : null;
}

/** Notes where `npm start`'s proxy listens, with the process that runs it. */
export function recordLocalProxyUrl(url) {
  mkdirSync(proxyStateDir, { recursive: true });
  writeFileSync(urlFile, `${JSON.stringify({ url, pid: process.pid })}\n`);
}

/** Forgets it when that proxy stops (only if it is still this process's note). */
export function forgetLocalProxyUrl() {
  if (readNote()?.pid === process.pid) rmSync(urlFile, { force: true });
}

/**
 * The proxy `npm run pair` talks to: PROXY_URL, else the one `npm start` noted while its process
 * still runs, else PROXY_PORT (default 8787) on this machine. `from` says which, for messages.
 */
export function proxyForPairing() {
  if (process.env.PROXY_URL) return { url: process.env.PROXY_URL.replace(/\/+$/, ''), from: 'PROXY_URL' };
  const note = readNote();
  if (note && alive(note.pid)) return { url: note.url, from: '`npm start`' };
  return { url: `http://127.0.0.1:${process.env.PROXY_PORT || 8787}`, from: process.env.PROXY_PORT ? 'PROXY_PORT' : 'the default port' };
}

function readNote() {
  try {
    const note = JSON.parse(readFileSync(urlFile, 'utf8'));
    return typeof note?.url === 'string' && Number.isInteger(note?.pid) ? note : null;
  } catch {
    return null;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return error?.code === 'EPERM';
  }
}
