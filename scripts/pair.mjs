// `npm run pair`: hands out a one-time pairing code for another device (a laptop, a Chromebook,
// a kiosk) to use the proxy, and lists or revokes the paired devices. Talks to the proxy `npm
// start` runs (on whatever port it was given: it notes its proxy's URL in .cache/proxy/url), or to a
// deployed one: PROXY_URL=https://… OWNER_TOKEN=… npm run pair.
//
//   npm run pair [-- "Anna's Chromebook"]     a code (valid 10 minutes) for one device
//   npm run pair -- --list                      the paired devices, their last use and tokens today
//   npm run pair -- --revoke dev_…              unpair one device at once
import { ownerTokenForPairing, proxyForPairing } from './lib/owner.mjs';

const { url: proxy, from } = proxyForPairing();
const token = ownerTokenForPairing();
if (!token) {
  console.error('No owner token. For the local proxy, start it once with `npm start`; for a deployed one, set OWNER_TOKEN (the secret you gave `wrangler secret put OWNER_TOKEN`).');
  process.exit(1);
}

async function call(method, path, body) {
  let response;
  try {
    response = await fetch(`${proxy}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new Error(`Could not reach the proxy at ${proxy} (from ${from}). Is \`npm start\` running (or PROXY_URL right)?`);
  }
  const json = await response.json().catch(() => null);
  if (!response.ok) throw new Error(json?.error?.message ?? `The proxy answered ${response.status}.`);
  return json;
}

try {
  const [first, second] = process.argv.slice(2);
  if (first === '--list') {
    const { devices } = await call('GET', '/v1/owner/devices');
    if (devices.length === 0) console.log('No devices are paired yet.');
    for (const d of devices) {
      const state = d.revoked_at ? `revoked ${d.revoked_at.slice(0, 10)}` : `last used ${d.last_used_at ? d.last_used_at.replace('T', ' ').slice(0, 16) : 'never'}`;
      console.log(`${d.id}  ${d.label}  (${state}; ${d.tokens_today.toLocaleString('en-US')} tokens today)`);
    }
  } else if (first === '--revoke') {
    if (!second) throw new Error('Name the device: npm run pair -- --revoke dev_… (see --list).');
    const { device } = await call('DELETE', `/v1/owner/devices/${encodeURIComponent(second)}`);
    console.log(`Revoked ${device.id} (${device.label}): its next request is refused.`);
  } else {
    const { code, expires_at } = await call('POST', '/v1/owner/pairing-codes', first ? { label: first } : {});
    console.log(`Pairing code: ${code}`);
    console.log(`Valid once, until ${expires_at.replace('T', ' ').slice(0, 16)} UTC. On the device: the app's Settings, Pair this device.`);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
