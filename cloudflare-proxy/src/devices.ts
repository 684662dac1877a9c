// The devices the proxy trusts: pairing codes the owner hands out, the device tokens they are
// exchanged for (kept only as SHA-256 hashes), revocation, and each device's limits, counted here.
// One Durable Object (SQLite storage) holds them all, so every check and count is consistent
// across the Worker's instances: a request is authorised and counted in one call.
import { DurableObject } from 'cloudflare:workers';
import type { Authorised, DeviceInfo, DeviceLimits, DevicesApi, NetAllowance, Refusal } from './device-types.ts';
import type { Env } from './env.ts';

export type { Authorised, DeviceInfo, DeviceLimits, Refusal } from './device-types.ts';

/** How long a pairing code stays usable, and a device token. */
export const CODE_TTL_MS = 10 * 60_000;
export const TOKEN_TTL_MS = 365 * 24 * 3_600_000;
/**
 * Wrong pairing codes tolerated per minute from one address, before pairing pauses for it, and
 * from everyone, before it pauses for all: one address cannot lock the others out.
 */
export const PAIRING_FAILURES_PER_MINUTE_PER_ADDRESS = 10;
export const PAIRING_FAILURES_PER_MINUTE = 100;
export const DEFAULT_REQUESTS_PER_MINUTE = 60;
export const DEFAULT_TOKENS_PER_DAY = 2_000_000;
/** How long a network ticket (the relay's and the resolver's credential) lasts. */
export const TICKET_TTL_MS = 12 * 3_600_000;
/** Bytes a device's computer may move through the relay in a UTC day, both ways (2 GiB). */
export const DEFAULT_NET_BYTES_PER_DAY = 2 * 1024 ** 3;

/** Crockford's base32 without I, L, O, U: easy to read aloud and type. */
const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

interface DeviceRow extends Record<string, SqlStorageValue> {
  id: string;
  label: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  requests_per_minute: number | null;
  tokens_per_day: number | null;
  day: string | null;
  tokens_today: number;
  minute: number | null;
  minute_requests: number;
  previous_minute_requests: number;
  net_day: string | null;
  net_bytes_today: number;
}

export class Devices extends DurableObject<Env> implements DevicesApi {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS devices (
        id TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        last_used_at INTEGER,
        revoked_at INTEGER,
        requests_per_minute INTEGER,
        tokens_per_day INTEGER,
        day TEXT,
        tokens_today INTEGER NOT NULL DEFAULT 0,
        minute INTEGER,
        minute_requests INTEGER NOT NULL DEFAULT 0,
        previous_minute_requests INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE IF NOT EXISTS pairing_codes (
        code_hash TEXT PRIMARY KEY,
        label TEXT,
        expires_at INTEGER NOT NULL,
        requests_per_minute INTEGER,
        tokens_per_day INTEGER
      );
      CREATE TABLE IF NOT EXISTS pairing_failures (minute INTEGER PRIMARY KEY, count INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS pairing_failures_by_address (address TEXT NOT NULL, minute INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (address, minute));
      CREATE TABLE IF NOT EXISTS tickets (ticket_hash TEXT PRIMARY KEY, device_id TEXT NOT NULL, expires_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS resolved (
        device_id TEXT NOT NULL,
        address TEXT NOT NULL,
        name TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (device_id, address)
      );
    `);
    // Added after the first release: older stores get the column.
    const columns = this.sql.exec<{ name: string }>('PRAGMA table_info(devices)').toArray().map((c) => c.name);
    if (!columns.includes('net_day')) this.sql.exec('ALTER TABLE devices ADD COLUMN net_day TEXT; ALTER TABLE devices ADD COLUMN net_bytes_today INTEGER NOT NULL DEFAULT 0;');
  }

  /** A one-time code the owner gives to a device; it is stored hashed, and shown once. */
  async createCode(options: { label?: string | null; limits?: Partial<DeviceLimits> } = {}, now = Date.now()): Promise<{ code: string; expires_at: string }> {
    const code = randomCode();
    this.sql.exec('DELETE FROM pairing_codes WHERE expires_at < ?', now);
    this.sql.exec(
      'INSERT INTO pairing_codes (code_hash, label, expires_at, requests_per_minute, tokens_per_day) VALUES (?, ?, ?, ?, ?)',
      await sha256(normaliseCode(code)),
      options.label ?? null,
      now + CODE_TTL_MS,
      options.limits?.requests_per_minute ?? null,
      options.limits?.tokens_per_day ?? null,
    );
    return { code: `${code.slice(0, 4)}-${code.slice(4)}`, expires_at: new Date(now + CODE_TTL_MS).toISOString() };
  }

  /** Exchanges a pairing code for a device token (returned once, never stored). */
  async pair(code: string, label: string, address = 'unknown', now = Date.now()): Promise<{ ok: true; device: DeviceInfo; token: string } | Refusal> {
    address = address.slice(0, 64);
    const minute = Math.floor(now / 60_000);
    const retry = 60 - Math.floor((now % 60_000) / 1000);
    const mine = this.sql.exec<{ count: number }>('SELECT count FROM pairing_failures_by_address WHERE address = ? AND minute = ?', address, minute).toArray()[0]?.count ?? 0;
    if (mine >= PAIRING_FAILURES_PER_MINUTE_PER_ADDRESS) {
      return refuse(429, 'pairing_locked', `Too many wrong pairing codes from this address in the last minute; pairing is paused for it for ${retry} s. Check the code and try again then.`, retry);
    }
    const failures = this.sql.exec<{ count: number }>('SELECT count FROM pairing_failures WHERE minute = ?', minute).toArray()[0]?.count ?? 0;
    if (failures >= PAIRING_FAILURES_PER_MINUTE) {
      return refuse(429, 'pairing_locked', `Too many wrong pairing codes in the last minute; pairing is paused for ${retry} s. Check the code and try again then.`, retry);
    }
    const hash = await sha256(normaliseCode(code));
    const row = this.sql.exec<{ label: string | null; expires_at: number; requests_per_minute: number | null; tokens_per_day: number | null }>(
      'SELECT label, expires_at, requests_per_minute, tokens_per_day FROM pairing_codes WHERE code_hash = ?',
      hash,
    ).toArray()[0];
    if (!row || row.expires_at < now) {
      this.sql.exec('INSERT INTO pairing_failures (minute, count) VALUES (?, 1) ON CONFLICT(minute) DO UPDATE SET count = count + 1', minute);
      this.sql.exec('DELETE FROM pairing_failures WHERE minute < ?', minute - 5);
      this.sql.exec('INSERT INTO pairing_failures_by_address (address, minute, count) VALUES (?, ?, 1) ON CONFLICT(address, minute) DO UPDATE SET count = count + 1', address, minute);
      this.sql.exec('DELETE FROM pairing_failures_by_address WHERE minute < ?', minute - 1);
      const why = row ? 'has expired (codes last 10 minutes)' : 'is not a pairing code this proxy gave out, or it was used already';
      return refuse(401, 'pairing_code_invalid', `That code ${why}. Ask for a new one: \`npm run pair\` on the machine running the proxy, or the proxy's owner.`);
    }
    // One use: the code is gone whatever happens next.
    this.sql.exec('DELETE FROM pairing_codes WHERE code_hash = ?', hash);
    return { ok: true, ...(await this.addDevice(row.label ?? label, { requests_per_minute: row.requests_per_minute, tokens_per_day: row.tokens_per_day }, now)) };
  }

  /** A device added without a code: only for the local proxy `npm start` runs (LOCAL_PAIRING). */
  async pairLocal(label: string, now = Date.now()): Promise<{ device: DeviceInfo; token: string }> {
    return this.addDevice(label, { requests_per_minute: null, tokens_per_day: null }, now);
  }

  /**
   * Checks a token and, with `count` (every route but the device's own status), counts the
   * request against the device's per-minute limit and refuses it past its limits.
   */
  async authorise(token: string | null, count = true, now = Date.now()): Promise<Authorised | Refusal> {
    if (!token) return refuse(401, 'device_not_paired', NOT_PAIRED);
    const row = this.sql.exec<DeviceRow>('SELECT * FROM devices WHERE token_hash = ?', await sha256(token)).toArray()[0];
    if (!row) return refuse(401, 'device_token_invalid', `This device's token is not one this proxy knows (it may have been reset). ${PAIR_AGAIN}`);
    if (row.revoked_at !== null) return refuse(401, 'device_revoked', `This device ("${row.label}") was unpaired by the proxy's owner. ${PAIR_AGAIN}`);
    if (row.expires_at < now) return refuse(401, 'device_token_expired', `This device's token expired on ${new Date(row.expires_at).toISOString().slice(0, 10)}. ${PAIR_AGAIN}`);

    const limits = this.limitsOf(row);
    if (!count) return { ok: true, device: toInfo(row), limits };
    const minute = Math.floor(now / 60_000);
    const previous = row.minute === minute ? row.previous_minute_requests : row.minute === minute - 1 ? row.minute_requests : 0;
    const current = row.minute === minute ? row.minute_requests : 0;
    // A sliding minute: the previous minute's count, weighted by how much of it is still in the window.
    const estimate = previous * (1 - (now % 60_000) / 60_000) + current;
    if (estimate + 1 > limits.requests_per_minute) {
      const retry = Math.max(1, Math.ceil((60_000 - (now % 60_000)) / 1000));
      return refuse(429, 'device_rate_limited', `This device is over its limit of ${limits.requests_per_minute} requests a minute (set by the proxy's owner). Try again in ${retry} s.`, retry);
    }
    const day = utcDay(now);
    const tokensToday = row.day === day ? row.tokens_today : 0;
    if (tokensToday >= limits.tokens_per_day) {
      const retry = Math.ceil((Date.parse(`${day}T00:00:00Z`) + 86_400_000 - now) / 1000);
      return refuse(
        429,
        'device_daily_limit',
        `This device has used its ${limits.tokens_per_day.toLocaleString('en-US')} model tokens for today (a limit set by the proxy's owner); it resets at 00:00 UTC, in ${formatWait(retry)}.`,
        retry,
      );
    }
    this.sql.exec(
      'UPDATE devices SET last_used_at = ?, minute = ?, minute_requests = ?, previous_minute_requests = ?, day = ?, tokens_today = ? WHERE id = ?',
      now,
      minute,
      current + 1,
      previous,
      day,
      tokensToday,
      row.id,
    );
    const device = toInfo({ ...row, last_used_at: now, day, tokens_today: tokensToday });
    return { ok: true, device, limits };
  }

  /** Adds model tokens a device spent (read from the API's usage as the reply streamed). */
  async recordUsage(deviceId: string, tokens: number, now = Date.now()): Promise<void> {
    if (!(tokens > 0)) return;
    const day = utcDay(now);
    this.sql.exec('UPDATE devices SET tokens_today = CASE WHEN day = ? THEN tokens_today + ? ELSE ? END, day = ? WHERE id = ?', day, tokens, tokens, day, deviceId);
  }

  async list(): Promise<DeviceInfo[]> {
    return this.sql.exec<DeviceRow>('SELECT * FROM devices ORDER BY created_at').toArray().map(toInfo);
  }

  async revoke(id: string, now = Date.now()): Promise<DeviceInfo | null> {
    this.sql.exec('UPDATE devices SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?', now, id);
    // Its network tickets die with it (an open relay learns at its next check: netUse).
    this.sql.exec('DELETE FROM tickets WHERE device_id = ?', id);
    return this.get(id);
  }

  async setLimits(id: string, limits: Partial<DeviceLimits>): Promise<DeviceInfo | null> {
    if (limits.requests_per_minute !== undefined) this.sql.exec('UPDATE devices SET requests_per_minute = ? WHERE id = ?', limits.requests_per_minute, id);
    if (limits.tokens_per_day !== undefined) this.sql.exec('UPDATE devices SET tokens_per_day = ? WHERE id = ?', limits.tokens_per_day, id);
    return this.get(id);
  }

  async createTicket(deviceId: string, now = Date.now()): Promise<{ ticket: string; expires_at: string }> {
    const ticket = `sdk_net_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
    this.sql.exec('DELETE FROM tickets WHERE expires_at < ?', now);
    this.sql.exec('INSERT INTO tickets (ticket_hash, device_id, expires_at) VALUES (?, ?, ?)', await sha256(ticket), deviceId, now + TICKET_TTL_MS);
    return { ticket, expires_at: new Date(now + TICKET_TTL_MS).toISOString() };
  }

  /** The device a network ticket belongs to, while the ticket lasts and the device is paired. */
  async ticketDevice(ticket: string | null, now = Date.now()): Promise<{ ok: true; device_id: string } | Refusal> {
    const row = ticket ? this.sql.exec<{ device_id: string; expires_at: number }>('SELECT device_id, expires_at FROM tickets WHERE ticket_hash = ?', await sha256(ticket)).toArray()[0] : undefined;
    if (!row || row.expires_at < now) return refuse(401, 'device_token_invalid', 'The computer\'s network ticket is missing or expired; the app asks for a new one.');
    const refused = this.deviceGone(this.sql.exec<DeviceRow>('SELECT * FROM devices WHERE id = ?', row.device_id).toArray()[0], now);
    return refused ?? { ok: true, device_id: row.device_id };
  }

  /** Why a device's computer may no longer use the network, or null while it may. */
  private deviceGone(device: DeviceRow | undefined, now: number): Refusal | null {
    if (!device || device.revoked_at !== null) return refuse(401, 'device_revoked', `This device was unpaired by the proxy's owner. ${PAIR_AGAIN}`);
    if (device.expires_at < now) return refuse(401, 'device_token_expired', `This device's token expired on ${new Date(device.expires_at).toISOString().slice(0, 10)}. ${PAIR_AGAIN}`);
    return null;
  }

  async rememberAddresses(deviceId: string, name: string, addresses: { address: string; ttl: number }[], now = Date.now()): Promise<void> {
    this.sql.exec('DELETE FROM resolved WHERE expires_at < ?', now);
    for (const { address, ttl } of addresses) {
      this.sql.exec(
        'INSERT INTO resolved (device_id, address, name, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT(device_id, address) DO UPDATE SET name = excluded.name, expires_at = excluded.expires_at',
        deviceId,
        address,
        name,
        now + ttl * 1000,
      );
    }
  }

  async resolvedName(deviceId: string, address: string, now = Date.now()): Promise<string | null> {
    const row = this.sql.exec<{ name: string }>('SELECT name FROM resolved WHERE device_id = ? AND address = ? AND expires_at >= ?', deviceId, address, now).toArray()[0];
    return row?.name ?? null;
  }

  /**
   * Adds bytes the device's computer moved through the relay, and says whether it may go on: not
   * once its device is revoked or expired, nor past its bytes for the day (NET_BYTES_PER_DAY).
   */
  async netUse(deviceId: string, bytes: number, now = Date.now()): Promise<NetAllowance | Refusal> {
    const day = utcDay(now);
    if (bytes > 0) {
      this.sql.exec('UPDATE devices SET net_bytes_today = CASE WHEN net_day = ? THEN net_bytes_today + ? ELSE ? END, net_day = ? WHERE id = ?', day, bytes, bytes, day, deviceId);
    }
    const row = this.sql.exec<DeviceRow>('SELECT * FROM devices WHERE id = ?', deviceId).toArray()[0];
    const gone = this.deviceGone(row, now);
    if (gone || !row) return gone!;
    const used = row.net_day === day ? row.net_bytes_today : 0;
    const limit = this.limitsOf(row).net_bytes_per_day;
    if (used >= limit) {
      const retry = Math.ceil((Date.parse(`${day}T00:00:00Z`) + 86_400_000 - now) / 1000);
      return refuse(
        429,
        'net_daily_limit',
        `This device's computer has used its ${formatBytes(limit)} of network for today (a limit set by the proxy's owner); it resets at 00:00 UTC, in ${formatWait(retry)}.`,
        retry,
      );
    }
    return { ok: true, bytes_today: used, limit };
  }

  private get(id: string): DeviceInfo | null {
    const row = this.sql.exec<DeviceRow>('SELECT * FROM devices WHERE id = ?', id).toArray()[0];
    return row ? toInfo(row) : null;
  }

  private limitsOf(row: DeviceRow) {
    return {
      requests_per_minute: row.requests_per_minute ?? positive(this.env.DEVICE_REQUESTS_PER_MINUTE) ?? DEFAULT_REQUESTS_PER_MINUTE,
      tokens_per_day: row.tokens_per_day ?? positive(this.env.DEVICE_TOKENS_PER_DAY) ?? DEFAULT_TOKENS_PER_DAY,
      net_bytes_per_day: positive(this.env.NET_BYTES_PER_DAY) ?? DEFAULT_NET_BYTES_PER_DAY,
    };
  }

  private async addDevice(label: string, limits: DeviceLimits, now: number): Promise<{ device: DeviceInfo; token: string }> {
    const token = `sdk_dev_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
    const id = `dev_${base64url(crypto.getRandomValues(new Uint8Array(9)))}`;
    this.sql.exec(
      'INSERT INTO devices (id, label, token_hash, created_at, expires_at, requests_per_minute, tokens_per_day) VALUES (?, ?, ?, ?, ?, ?, ?)',
      id,
      label.slice(0, 80) || 'A device',
      await sha256(token),
      now,
      now + (positive(this.env.DEVICE_TOKEN_TTL_S) ?? TOKEN_TTL_MS / 1000) * 1000,
      limits.requests_per_minute,
      limits.tokens_per_day,
    );
    return { device: this.get(id)!, token };
  }
}

const NOT_PAIRED =
  "This device is not paired with the proxy: no device token was sent. Pair it in the app's Settings (Pair this device) with a code from `npm run pair` on the machine running the proxy, or from the proxy's owner.";
const PAIR_AGAIN = "Pair it again in the app's Settings (Pair this device) with a new code.";

function refuse(status: Refusal['status'], type: Refusal['type'], message: string, retryAfter?: number): Refusal {
  return { ok: false, status, type, message, ...(retryAfter !== undefined ? { retry_after_s: retryAfter } : {}) };
}

function toInfo(row: DeviceRow): DeviceInfo {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    label: row.label,
    created_at: iso(row.created_at)!,
    expires_at: iso(row.expires_at)!,
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
    requests_per_minute: row.requests_per_minute,
    tokens_per_day: row.tokens_per_day,
    tokens_today: row.day === utcDay(Date.now()) ? row.tokens_today : 0,
    net_bytes_today: row.net_day === utcDay(Date.now()) ? row.net_bytes_today : 0,
  };
}

function randomCode(): string {
  // 8 symbols of 32 = 40 bits, against at most 10 guesses a minute, for 10 minutes.
  return Array.from(crypto.getRandomValues(new Uint8Array(8)), (byte) => CODE_ALPHABET[byte % 32]).join('');
}

/** Codes are forgiving to type: case, dashes and spaces do not matter, and O/I/L read as 0/1/1. */
export function normaliseCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
}

export async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function positive(value: string | undefined): number | null {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isInteger(n) && n > 0 ? n : null;
}

function formatBytes(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}

function formatWait(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.ceil((seconds % 3600) / 60);
  return hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min`;
}
