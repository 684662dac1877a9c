// Stack settings: defaults, validation with messages a user can act on, persistence.
import { isOcrLanguage, OCR_LANGUAGES } from './documents/languages.ts';
import type { OcrEngineChoice } from '../protocol/documents.ts';
import type { Provider, Settings, SettingsPatch } from '../protocol/settings.ts';
import type { StackStorage } from '../storage/json-files.ts';
import { BadRequestError } from './request-error.ts';

// The newest Sonnet the SDK lists; users pick another in Settings.
export const DEFAULT_MODEL = 'claude-sonnet-5-5';
const FILE = 'settings.json';
// The user's own key lives apart from the settings, so an exported stack can leave it behind.
const SECRETS = 'secrets.json';

export const DEFAULT_ENDPOINTS: Record<Exclude<Provider, 'proxy'>, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'http://127.0.0.1:11434/v1',
};

const OCR_ENGINES: readonly OcrEngineChoice[] = ['local', 'mistral'];

export class SettingsError extends BadRequestError {}

/** Returns the merged settings, or throws SettingsError naming the bad field. */
export function mergeSettings(current: Settings, patch: SettingsPatch): Settings {
  const next = { ...current };
  if (patch.provider !== undefined) {
    if (!['proxy', 'anthropic', 'openai'].includes(patch.provider)) {
      throw new SettingsError('The provider must be "proxy", "anthropic" (your own key) or "openai" (an OpenAI-compatible endpoint).');
    }
    next.provider = patch.provider;
  }
  if (patch.endpoint !== undefined) next.endpoint = normaliseEndpoint(patch.endpoint);
  if (patch.heartbeat_minutes !== undefined) {
    const minutes = Number(patch.heartbeat_minutes);
    if (!Number.isInteger(minutes) || minutes < 0 || minutes > 24 * 60) {
      throw new SettingsError('Heartbeat minutes must be a whole number from 0 (off) to 1440.');
    }
    next.heartbeat_minutes = minutes;
  }
  if (patch.heartbeat_quiet !== undefined) {
    if (patch.heartbeat_quiet === null) {
      delete next.heartbeat_quiet;
    } else {
      const { from, to } = patch.heartbeat_quiet ?? {};
      if (!isClockTime(from) || !isClockTime(to) || from === to) {
        throw new SettingsError('Quiet hours are two different times of day as HH:MM (e.g. 22:00 to 07:00), or none.');
      }
      next.heartbeat_quiet = { from, to };
    }
  }
  if (patch.ocr_engine !== undefined) {
    // Kept whatever the provider: Mistral is used only while the provider is the proxy, so a
    // switch to another provider and back keeps the user's choice.
    if (!OCR_ENGINES.includes(patch.ocr_engine)) {
      throw new SettingsError('Scans are read "local" (in this browser, offline) or "mistral" (Mistral OCR through the proxy).');
    }
    next.ocr_engine = patch.ocr_engine;
  }
  if (patch.ocr_language !== undefined) {
    if (patch.ocr_language !== 'auto' && !isOcrLanguage(patch.ocr_language)) {
      throw new SettingsError(`Scans are read in "auto" or one of ${Object.keys(OCR_LANGUAGES).join(', ')}, not ${JSON.stringify(patch.ocr_language)}.`);
    }
    next.ocr_language = patch.ocr_language;
  }
  if (patch.computer_network !== undefined) {
    if (typeof patch.computer_network !== 'boolean') {
      throw new SettingsError(`The computer's network is turned on with true or off with false, not ${JSON.stringify(patch.computer_network) ?? String(patch.computer_network)}.`);
    }
    next.computer_network = patch.computer_network;
  }
  if (patch.kiosk !== undefined) {
    if (typeof patch.kiosk !== 'boolean') throw new SettingsError('Kiosk mode is turned on with true or off with false.');
    if (patch.kiosk) next.kiosk = true;
    else delete next.kiosk;
  }
  if (patch.mission_token_budget !== undefined) {
    const budget = Number(patch.mission_token_budget);
    if (!Number.isInteger(budget) || budget < 0 || budget > 100_000_000) {
      throw new SettingsError('The token budget per mission is a whole number of tokens from 1,000 to 100,000,000, or 0 for no limit.');
    }
    if (budget > 0 && budget < 1_000) throw new SettingsError('The token budget per mission is at least 1,000 tokens (one model call uses more), or 0 for no limit.');
    if (budget === 0) delete next.mission_token_budget;
    else next.mission_token_budget = budget;
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

function isClockTime(value: unknown): value is string {
  return typeof value === 'string' && /^([01]\d|2[0-3]):[0-5]\d$/.test(value);
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
  const stored = await storage.readJson<SettingsPatch>(FILE);
  const apiKey = await loadApiKey(storage);
  // Settings saved before a field existed get its default (an older file has no ocr_engine, no
  // computer_network: the computer used the network whenever the device was paired).
  let settings: Settings = { ...defaults, ocr_engine: defaults.ocr_engine ?? 'local', computer_network: defaults.computer_network ?? true };
  try {
    if (stored) settings = mergeSettings(settings, { ...stored, api_key: undefined });
  } catch {
    // A settings file from a damaged or older build falls back to the defaults.
  }
  return { ...settings, has_api_key: apiKey !== null };
}

export function saveSettings(storage: StackStorage, settings: Settings): Promise<void> {
  const { has_api_key: _derived, ...stored } = settings;
  return storage.writeJson(FILE, stored);
}

export async function loadApiKey(storage: StackStorage): Promise<string | null> {
  const secrets = await storage.readJson<{ api_key?: unknown }>(SECRETS);
  return typeof secrets?.api_key === 'string' && secrets.api_key ? secrets.api_key : null;
}

/** Stores (or, with null, forgets) the user's key for the direct providers. */
export async function saveApiKey(storage: StackStorage, key: string | null): Promise<void> {
  const trimmed = key?.trim() ?? '';
  if (trimmed && (trimmed.length > 500 || /\s/.test(trimmed))) throw new SettingsError('That does not look like an API key.');
  await storage.writeJson(SECRETS, trimmed ? { api_key: trimmed } : {});
}
