// This browser's credentials with Stackdocs proxies: a device token per proxy, got by pairing
// (a one-time code from the proxy's owner, or by itself with the local proxy of `npm start`),
// kept in the browser's own storage for every stack, revocable by the owner. Never an API key.
import type { StackStorage } from '../storage/json-files.ts';

export interface DeviceCredential {
  token: string;
  device_id: string;
  /** The name the proxy's owner sees in their list of devices. */
  label: string;
}

export interface DeviceCredentials {
  get(endpoint: string): Promise<DeviceCredential | null>;
  set(endpoint: string, credential: DeviceCredential | null): Promise<void>;
}

const FILE = 'proxy-credentials.json';

/** Keyed by the proxy's endpoint, so stacks that use different proxies each find theirs. */
export function deviceCredentials(storage: StackStorage): DeviceCredentials {
  const key = (endpoint: string) => endpoint.replace(/\/+$/, '');
  return {
    async get(endpoint) {
      const all = (await storage.readJson<Record<string, DeviceCredential>>(FILE)) ?? {};
      const found = all[key(endpoint)];
      return found && typeof found.token === 'string' ? found : null;
    },
    async set(endpoint, credential) {
      const all = { ...((await storage.readJson<Record<string, DeviceCredential>>(FILE)) ?? {}) };
      if (credential) all[key(endpoint)] = credential;
      else delete all[key(endpoint)];
      await storage.writeJson(FILE, all);
    },
  };
}

export class PairingError extends Error {}

/**
 * Exchanges the owner's one-time code (or, with `code: null`, asks the local proxy that pairs by
 * itself) for a device token. Throws PairingError with the proxy's own words when it refuses.
 */
export async function pairDevice(endpoint: string, code: string | null, label: string, fetchFn: typeof fetch): Promise<DeviceCredential> {
  const base = endpoint.replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetchFn(`${base}/v1/pair${code === null ? '/local' : ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(code === null ? { label } : { code, label }),
      credentials: 'omit',
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new PairingError(`Could not reach the proxy at ${base} to pair this device. Check the endpoint and the connection.`);
  }
  const body = (await response.json().catch(() => null)) as { token?: unknown; device?: { id?: unknown; label?: unknown }; error?: { message?: unknown } } | null;
  if (!response.ok || typeof body?.token !== 'string') {
    const said = typeof body?.error?.message === 'string' ? body.error.message : `it answered ${response.status}`;
    throw new PairingError(`The proxy did not pair this device: ${said}`);
  }
  return { token: body.token, device_id: String(body.device?.id ?? ''), label: String(body.device?.label ?? label) };
}

/** A name for this browser in the owner's list, e.g. "Stackdocs in Chrome on Linux". */
export function deviceLabel(userAgent: string): string {
  const browser = /Edg\//.test(userAgent) ? 'Edge' : /Firefox\//.test(userAgent) ? 'Firefox' : /Chrom(e|ium)\//.test(userAgent) ? 'Chrome' : /Safari\//.test(userAgent) ? 'Safari' : 'a browser';
  const system = /CrOS/.test(userAgent) ? 'ChromeOS' : /Android/.test(userAgent) ? 'Android' : /iPhone|iPad/.test(userAgent) ? 'iOS' : /Mac OS X/.test(userAgent) ? 'macOS' : /Windows/.test(userAgent) ? 'Windows' : /Linux/.test(userAgent) ? 'Linux' : '';
  return `Stackdocs in ${browser}${system ? ` on ${system}` : ''}`;
}
