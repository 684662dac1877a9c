// A stack's settings and where its model calls go (the model's status, the proxy's network).

import type { OcrEngineChoice, OcrLanguageChoice } from './documents.ts';

/**
 * Where model calls go: the proxy, which holds the key (the default; the browser never sees a
 * key); Anthropic directly with the user's own key, kept only in this browser; or any
 * OpenAI-compatible endpoint with tool calling (e.g. a local model server, for offline work).
 */
export type Provider = 'proxy' | 'anthropic' | 'openai';

export type SettingsPatch = Partial<Omit<Settings, 'has_api_key' | 'heartbeat_quiet'>> & { api_key?: string | null; heartbeat_quiet?: Settings['heartbeat_quiet'] | null };

export interface Settings {
  provider: Provider;
  /** Base URL of the model endpoint for the provider. */
  endpoint: string;
  /** Whether a key is stored for the direct providers. The key itself never leaves the worker. */
  has_api_key: boolean;
  /** Anthropic model id sent with every request. */
  model: string;
  /** Minutes between heartbeats (the agent's own check-ins); 0 turns them off. */
  heartbeat_minutes: number;
  /**
   * No heartbeat between these local times ("HH:MM", e.g. 22:00 to 07:00 across midnight); absent:
   * none. A patch with null removes them.
   */
  heartbeat_quiet?: { from: string; to: string };
  /**
   * Who reads scans: `local` (tesseract in this browser, offline) or `mistral` (Mistral OCR
   * through the proxy, which holds its key; falls back to local when it cannot be reached).
   */
  ocr_engine: OcrEngineChoice;
  /**
   * The language scans are in: `auto` (read in English first, again in another language when
   * the text plainly is one; the default when absent) or one of eng, deu, fra, spa, ita, por, nld.
   */
  ocr_language?: OcrLanguageChoice;
  /**
   * Whether the stack's computer may use the network (the proxy's relay, for a paired device).
   * A change reaches a running computer at once (its open connections end).
   */
  computer_network: boolean;
  /**
   * Tokens one mission may use, its subagents' included (input, output and cache, as counted in
   * the chat); the mission stops, saying so, once it reaches them. Absent or 0: no limit.
   */
  mission_token_budget?: number;
  /**
   * The stack is a kiosk (set by its owner in this browser): a question to widen what the agent may
   * do is never put to a visitor, it is refused, so only what the owner allowed runs.
   */
  kiosk?: boolean;
}

/**
 * `device`: the name this browser is paired under, through a proxy (also when the proxy has no
 * model key), and `network` where that proxy lets the computer connect. `pairing`: set when the
 * proxy needs this device paired first ('code': with a code from its owner; 'local': it pairs by itself).
 */
export type ModelStatus =
  | { state: 'unknown' }
  | { state: 'ready'; endpoint: string; device?: string; network?: ProxyNetwork }
  | { state: 'not_configured'; endpoint: string; message: string; pairing?: 'code' | 'local'; device?: string; network?: ProxyNetwork }
  | { state: 'unreachable'; endpoint: string; message: string };

/** Where the proxy lets a paired device's computer connect: host names (`*.example.com` for any under it) and ports. */
export interface ProxyNetwork {
  hosts: string[];
  ports: number[];
}
