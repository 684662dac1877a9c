// Kiosk mode, as this browser keeps it: which stack is the kiosk, its owner's PIN (a salted
// PBKDF2 hash, never the PIN), how long a visitor may be idle, an optional daily reset time, and
// whether the terminal shows. The stack itself returns to its reset point (the stacks worker's
// copy of it as the owner left it) at every open and after each visitor.
import type { StackClient } from '../connection/stack-client.ts';
import type { StacksClient } from '../stacks/stacks-client.ts';

const KEY = 'stackdocs:kiosk';
export const PIN_ITERATIONS = 200_000;
/**
 * Wrong PINs in a row before entry is locked; the first lock's length, doubled at each lock
 * after, up to the longest.
 */
export const MAX_PIN_FAILURES = 5;
export const PIN_LOCK_MS = 60_000;
export const MAX_PIN_LOCK_MS = 60 * 60_000;
/** A PIN's digits: six or more, a million guesses, where four was ten thousand. */
export const MIN_PIN_DIGITS = 6;
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
  /**
   * Locks since the right PIN was last given: each doubles the next. Absent in a kiosk started
   * before locks grew (read as 0).
   */
  lockouts?: number;
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

/**
 * Why a new PIN will not do, or null: six to twelve digits. A kiosk started with a shorter PIN
 * before keeps it until its owner leaves kiosk mode; starting it again takes a new one.
 */
export function pinProblem(pin: string): string | null {
  return new RegExp(`^\\d{${MIN_PIN_DIGITS},12}$`).test(pin) ? null : `The PIN is ${MIN_PIN_DIGITS} to 12 digits.`;
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
    lockouts: 0,
  };
}

export type PinOutcome = { ok: true } | { ok: false; message: string; locked: boolean };

/** How long the lock after `lockouts` earlier ones lasts: 1, 2, 4, 8 … minutes, at most an hour. */
export function lockLength(lockouts: number): number {
  return Math.min(MAX_PIN_LOCK_MS, PIN_LOCK_MS * 2 ** Math.min(lockouts, 30));
}

function inWords(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  return minutes === 1 ? 'a minute' : minutes === 60 ? 'an hour' : `${minutes} minutes`;
}

function waitInWords(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  return seconds <= 90 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
}

/**
 * Checks the owner's PIN. Five wrong ones in a row lock entry for a minute, the next five for two,
 * then four, eight … up to an hour (kept across reloads); the right one clears the count and the
 * locks. The count is read again after the PIN's hash is made, so tries made side by side each count.
 */
export async function checkPin(pin: string, now = Date.now(), store: KeyValue = localStorage): Promise<PinOutcome> {
  const config = readKiosk(store);
  if (!config) return { ok: true };
  const locked = (until: number) => ({ ok: false as const, locked: true, message: `Too many wrong PINs: try again in ${waitInWords(until - now)}.` });
  if (config.locked_until > now) return locked(config.locked_until);
  const right = (await hashPin(pin, fromBase64(config.salt), config.iterations)) === config.hash;
  const latest = readKiosk(store) ?? config;
  if (latest.locked_until > now) return locked(latest.locked_until);
  if (right) {
    writeKiosk({ ...latest, failures: 0, locked_until: 0, lockouts: 0 }, store);
    return { ok: true };
  }
  const failures = latest.failures + 1;
  if (failures >= MAX_PIN_FAILURES) {
    const lockouts = latest.lockouts ?? 0;
    const length = lockLength(lockouts);
    writeKiosk({ ...latest, failures: 0, locked_until: now + length, lockouts: lockouts + 1 }, store);
    return { ok: false, locked: true, message: `Wrong PIN, ${MAX_PIN_FAILURES} times: entry is locked for ${inWords(length)}.` };
  }
  writeKiosk({ ...latest, failures }, store);
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
