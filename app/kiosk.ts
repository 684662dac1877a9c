// Kiosk mode, as this browser keeps it: which stack is the kiosk, its owner's PIN (a salted
// PBKDF2 hash, never the PIN), how long a visitor may be idle, an optional daily reset time, and
// whether the terminal shows. The stack itself returns to its reset point (the stacks worker's
// copy of it as the owner left it) at every open and after each visitor.
import type { StackClient } from './stack-client.ts';
import type { StacksClient } from './stacks-client.ts';

const KEY = 'stackdocs:kiosk';
export const PIN_ITERATIONS = 200_000;
/** Wrong PINs in a row before entry is locked, and for how long. */
export const MAX_PIN_FAILURES = 5;
export const PIN_LOCK_MS = 60_000;
/** The countdown a visitor sees before the reset, which any touch cancels. */
export const COUNTDOWN_MS = 20_000;
export const DEFAULT_IDLE_MS = 3 * 60_000;

export interface KioskConfig {
  stack: string;
  /** base64 */
  salt: string;
  /** base64 of PBKDF2-SHA-256 of the PIN */
  hash: string;
  iterations: number;
  idle_ms: number;
  /** Local "HH:MM" of a daily reset, or null. */
  daily_reset: string | null;
  allow_terminal: boolean;
  /** Wrong PINs in a row, and until when entry is locked (epoch ms). */
  failures: number;
  locked_until: number;
}

export interface KioskSetup {
  pin: string;
  idle_ms: number;
  daily_reset: string | null;
  allow_terminal: boolean;
}

type KeyValue = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** This browser's kiosk, read once as the page loads (every change of mode loads the page again). */
export const PAGE_KIOSK: KioskConfig | null = typeof localStorage === 'undefined' ? null : readKiosk();
/** The terminal is hidden on a kiosk unless its owner let visitors use it. */
export const TERMINAL_HIDDEN = PAGE_KIOSK !== null && !PAGE_KIOSK.allow_terminal;

export function readKiosk(store: KeyValue = localStorage): KioskConfig | null {
  try {
    const parsed = JSON.parse(store.getItem(KEY) ?? 'null') as KioskConfig | null;
    return parsed && typeof parsed.stack === 'string' && typeof parsed.hash === 'string' && typeof parsed.salt === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

function writeKiosk(config: KioskConfig | null, store: KeyValue): void {
  if (config) store.setItem(KEY, JSON.stringify(config));
  else store.removeItem(KEY);
}

/** Why a PIN will not do, or null: four to twelve digits. */
export function pinProblem(pin: string): string | null {
  return /^\d{4,12}$/.test(pin) ? null : 'The PIN is 4 to 12 digits.';
}

export async function hashPin(pin: string, salt: Uint8Array, iterations: number): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(pin), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: salt as Uint8Array<ArrayBuffer>, iterations }, key, 256);
  return toBase64(new Uint8Array(bits));
}

export async function kioskConfig(stack: string, setup: KioskSetup): Promise<KioskConfig> {
  const problem = pinProblem(setup.pin);
  if (problem) throw new Error(problem);
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return {
    stack,
    salt: toBase64(salt),
    hash: await hashPin(setup.pin, salt, PIN_ITERATIONS),
    iterations: PIN_ITERATIONS,
    idle_ms: setup.idle_ms,
    daily_reset: setup.daily_reset,
    allow_terminal: setup.allow_terminal,
    failures: 0,
    locked_until: 0,
  };
}

export type PinOutcome = { ok: true } | { ok: false; message: string; locked: boolean };

/**
 * Checks the owner's PIN. Five wrong ones in a row lock entry for a minute (kept across reloads);
 * a right one clears the count.
 */
export async function checkPin(pin: string, now = Date.now(), store: KeyValue = localStorage): Promise<PinOutcome> {
  const config = readKiosk(store);
  if (!config) return { ok: true };
  if (config.locked_until > now) return { ok: false, locked: true, message: `Too many wrong PINs: try again in ${Math.ceil((config.locked_until - now) / 1000)} s.` };
  const right = (await hashPin(pin, fromBase64(config.salt), config.iterations)) === config.hash;
  if (right) {
    writeKiosk({ ...config, failures: 0, locked_until: 0 }, store);
    return { ok: true };
  }
  const failures = config.failures + 1;
  if (failures >= MAX_PIN_FAILURES) {
    writeKiosk({ ...config, failures: 0, locked_until: now + PIN_LOCK_MS }, store);
    return { ok: false, locked: true, message: `Wrong PIN, ${MAX_PIN_FAILURES} times: entry is locked for a minute.` };
  }
  writeKiosk({ ...config, failures }, store);
  return { ok: false, locked: false, message: `Wrong PIN (${failures} of ${MAX_PIN_FAILURES}).` };
}

/**
 * Makes the open stack a kiosk: it is marked so (its agent never asks a visitor for more), closed
 * (the computer saved, the databases closed), and copied whole as the point every visitor starts
 * from; then this browser keeps the kiosk's settings. The caller opens the page again after.
 */
export async function startKiosk(client: StackClient, stacks: StacksClient, stackId: string, config: KioskConfig, store: KeyValue = localStorage): Promise<void> {
  await client.call('update_settings', { kiosk: true });
  await client.call('close', {});
  client.close();
  try {
    await stacks.saveResetPoint(stackId, { heldByCaller: true });
  } catch (error) {
    // The stack is closed now: it opens again as it was (its kiosk mark is cleared as it opens).
    throw new KioskClosedError(error instanceof Error ? error.message : String(error));
  }
  writeKiosk(config, store);
}

/** Kiosk mode could not start after the stack was closed for it: the page must open it again. */
export class KioskClosedError extends Error {}

/**
 * Ends kiosk mode (the owner gave the PIN): the stack stays as it is now, the reset point goes.
 * Without its client (the stack could not open), its mark is cleared at its next open.
 */
export async function endKiosk(client: StackClient | null, stacks: StacksClient, stackId: string, store: KeyValue = localStorage): Promise<void> {
  await client?.call('update_settings', { kiosk: false });
  await stacks.dropResetPoint(stackId);
  writeKiosk(null, store);
}

/** When the next daily reset falls after `now` (local time), or null without one. */
export function nextDailyReset(dailyReset: string | null, now: number): number | null {
  const match = dailyReset ? /^(\d{2}):(\d{2})$/.exec(dailyReset) : null;
  if (!match) return null;
  const at = new Date(now);
  at.setHours(Number(match[1]), Number(match[2]), 0, 0);
  if (at.getTime() <= now) at.setDate(at.getDate() + 1);
  return at.getTime();
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}
