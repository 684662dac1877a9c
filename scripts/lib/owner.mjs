// The local proxy's owner token and device store, kept under .cache/proxy/ so `npm run pair` (a
// separate process) can hand out codes for the proxy `npm start` runs, and pairings survive restarts.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './setup.mjs';

export const proxyStateDir = join(root, '.cache', 'proxy');
const tokenFile = join(proxyStateDir, 'owner-token');

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
