// The devices' shapes and the Durable Object's RPC surface, free of the runtime's own types so
// Node-side code (tests) can import the modules that use them.
import type { ProxyErrorType } from './errors.ts';

/** What the owner may set per device; null = the proxy's default. */
export interface DeviceLimits {
  requests_per_minute: number | null;
  tokens_per_day: number | null;
}

export interface DeviceInfo extends DeviceLimits {
  id: string;
  label: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Model tokens counted today (UTC). */
  tokens_today: number;
  /** Bytes the device's computer moved through the relay today (UTC). */
  net_bytes_today: number;
}

export type Refusal = {
  ok: false;
  status: 401 | 403 | 404 | 429;
  type: ProxyErrorType;
  message: string;
  retry_after_s?: number;
};

export type Authorised = { ok: true; device: DeviceInfo; limits: { requests_per_minute: number; tokens_per_day: number; net_bytes_per_day: number } };

/** The relay may go on: the device's bytes today and its limit. */
export type NetAllowance = { ok: true; bytes_today: number; limit: number };

/** What the Worker calls on the Devices Durable Object (devices.ts). */
export interface DevicesApi {
  createCode(options?: { label?: string | null; limits?: Partial<DeviceLimits> }): Promise<{ code: string; expires_at: string }>;
  /** `address`: the client's, whose wrong codes are limited on their own as well as with everyone's. */
  pair(code: string, label: string, address?: string): Promise<{ ok: true; device: DeviceInfo; token: string } | Refusal>;
  pairLocal(label: string): Promise<{ device: DeviceInfo; token: string }>;
  authorise(token: string | null, count?: boolean): Promise<Authorised | Refusal>;
  recordUsage(deviceId: string, tokens: number): Promise<void>;
  list(): Promise<DeviceInfo[]>;
  revoke(id: string): Promise<DeviceInfo | null>;
  setLimits(id: string, limits: Partial<DeviceLimits>): Promise<DeviceInfo | null>;
  /** A credential for the computer's network only (relay and resolver), tied to the device. */
  createTicket(deviceId: string): Promise<{ ticket: string; expires_at: string }>;
  ticketDevice(ticket: string | null): Promise<{ ok: true; device_id: string } | Refusal>;
  /** Addresses the resolver gave the device for an allowed name, connectable until their TTL. */
  rememberAddresses(deviceId: string, name: string, addresses: { address: string; ttl: number }[]): Promise<void>;
  resolvedName(deviceId: string, address: string): Promise<string | null>;
  /** Adds relayed bytes; refused once the device is revoked or expired, or over its bytes for the day. */
  netUse(deviceId: string, bytes: number): Promise<NetAllowance | Refusal>;
}

/** The DEVICES binding, as much of it as the Worker uses. */
export interface DevicesNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): DevicesApi;
}
