// Stack settings: defaults, validation with messages a user can act on, persistence.
import type { Settings } from './protocol.ts';
import type { StackStorage } from './storage.ts';

// The newest Sonnet the SDK lists; users pick another in Settings.
export const DEFAULT_MODEL = 'claude-sonnet-5-5';
const FILE = 'settings.json';

export class SettingsError extends Error {}

/** Returns the merged settings, or throws SettingsError naming the bad field. */
export function mergeSettings(current: Settings, patch: Partial<Settings>): Settings {
  const next = { ...current };
  if (patch.endpoint !== undefined) next.endpoint = normaliseEndpoint(patch.endpoint);
  if (patch.heartbeat_minutes !== undefined) {
    const minutes = Number(patch.heartbeat_minutes);
    if (!Number.isInteger(minutes) || minutes < 0 || minutes > 24 * 60) {
      throw new SettingsError('Heartbeat minutes must be a whole number from 0 (off) to 1440.');
    }
    next.heartbeat_minutes = minutes;
  }
  if (patch.model !== undefined) {
    const model = String(patch.model).trim();
    if (!/^[\w.:@/-]{1,100}$/.test(model)) {
      throw new SettingsError('Model name must be 1-100 letters, digits or . : @ / - _ (e.g. claude-sonnet-5-5).');
    }
    next.model = model;
  }
  return next;
}

function normaliseEndpoint(value: string): string {
  let url: URL;
  try {
    url = new URL(String(value).trim());
  } catch {
    throw new SettingsError(`"${value}" is not a URL. Enter the proxy's address, e.g. http://127.0.0.1:8787.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SettingsError('The model endpoint must be an http:// or https:// address.');
  }
  return url.href.replace(/\/+$/, '');
}

export async function loadSettings(storage: StackStorage, defaults: Settings): Promise<Settings> {
  const stored = await storage.readJson<Partial<Settings>>(FILE);
  if (!stored) return defaults;
  try {
    return mergeSettings(defaults, stored);
  } catch {
    return defaults;
  }
}

export function saveSettings(storage: StackStorage, settings: Settings): Promise<void> {
  return storage.writeJson(FILE, settings);
}
