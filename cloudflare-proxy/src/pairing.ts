// Who may use the proxy: a device credential on every route but /health and pairing, checked
// (and counted) by the Devices Durable Object; the owner's token on the routes that manage them.
import { readJsonBody } from './body.ts';
import type { DeviceLimits, Refusal } from './device-types.ts';
import { devices, type Env } from './env.ts';
import { errorResponse } from './errors.ts';
import { clientAddress, failureGate, noteFailure } from './failures.ts';

/** The device token a request carries (`Authorization: Bearer sdk_dev_…`), or null. */
export function bearer(request: Request): string | null {
  const header = request.headers.get('authorization') ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match ? match[1]! : null;
}

export function refusalResponse(refusal: Refusal): Response {
  const headers: Record<string, string> = {};
  if (refusal.retry_after_s !== undefined) headers['retry-after'] = String(refusal.retry_after_s);
  // A day's quota or a bad credential will not pass by retrying now.
  if (refusal.type !== 'device_rate_limited' && refusal.type !== 'pairing_locked') headers['x-should-retry'] = 'false';
  return errorResponse(refusal.status, refusal.type, refusal.message, headers);
}

/** POST /v1/pair `{code, label?}` → `{device, token}`: the token is shown this once. */
export async function pairDevice(request: Request, env: Env): Promise<Response> {
  const address = clientAddress(request);
  const gated = failureGate(address);
  if (gated) {
    await request.body?.cancel();
    return gated;
  }
  const body = await readJsonBody(request);
  if (body instanceof Response) return body;
  if (typeof body.code !== 'string' || body.code.trim() === '') {
    return errorResponse(400, 'invalid_request', 'Send {"code": "<the pairing code>", "label": "<a name for this device>"}.');
  }
  const result = await devices(env).pair(body.code, labelOf(body.label), address);
  if (!result.ok) {
    noteFailure(address);
    return refusalResponse(result);
  }
  return Response.json({ device: result.device, token: result.token }, { status: 201, headers: { 'cache-control': 'no-store' } });
}

/** POST /v1/pair/local `{label?}`: the local proxy of `npm start` pairs the app it serves by itself. */
export async function pairLocalDevice(request: Request, env: Env): Promise<Response> {
  if (env.LOCAL_PAIRING !== '1') {
    await request.body?.cancel();
    return errorResponse(403, 'local_pairing_off', 'This proxy pairs devices only with a code. Ask its owner for one, or run `npm run pair` where it runs.');
  }
  const body = await readJsonBody(request);
  if (body instanceof Response) return body;
  const result = await devices(env).pairLocal(labelOf(body.label));
  return Response.json(result, { status: 201, headers: { 'cache-control': 'no-store' } });
}

/** The owner's routes need OWNER_TOKEN; null when the request may go on. */
export async function ownerRefusal(request: Request, env: Env): Promise<Response | null> {
  const expected = env.OWNER_TOKEN?.trim();
  if (!expected) {
    return errorResponse(503, 'owner_not_configured', 'This proxy has no owner token, so devices cannot be managed. Set one with `npx wrangler secret put OWNER_TOKEN` (locally, `npm start` makes one).', {
      'x-should-retry': 'false',
    });
  }
  // Compared as hashes, so the time taken says nothing about how much of it matched.
  const given = bearer(request) ?? '';
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  if (!timingSafeEqual(a, b)) return errorResponse(401, 'owner_unauthorized', "The owner's routes need `Authorization: Bearer <OWNER_TOKEN>`.", { 'x-should-retry': 'false' });
  return null;
}

/** POST /v1/owner/pairing-codes `{label?, requests_per_minute?, tokens_per_day?}` → `{code, expires_at}`. */
export async function createPairingCode(request: Request, env: Env): Promise<Response> {
  const body = await readJsonBody(request);
  if (body instanceof Response) return body;
  const limits = limitsOf(body);
  if (typeof limits === 'string') return errorResponse(400, 'invalid_request', limits);
  const label = typeof body.label === 'string' && body.label.trim() ? body.label.trim().slice(0, 80) : null;
  return Response.json(await devices(env).createCode({ label, limits }), { status: 201, headers: { 'cache-control': 'no-store' } });
}

/** GET /v1/owner/devices → `{devices: [...]}`, with each one's last use and today's tokens. */
export async function listDevices(_request: Request, env: Env): Promise<Response> {
  return Response.json({ devices: await devices(env).list() }, { headers: { 'cache-control': 'no-store' } });
}

/** DELETE /v1/owner/devices/<id>: revoked at once; its token is refused from the next request. */
export async function revokeDevice(_request: Request, env: Env, id: string): Promise<Response> {
  const device = await devices(env).revoke(id);
  return device ? Response.json({ device }) : errorResponse(404, 'device_not_found', `No device ${id}. GET /v1/owner/devices lists them.`);
}

/** PATCH /v1/owner/devices/<id> `{requests_per_minute?, tokens_per_day?}` (null = the default). */
export async function limitDevice(request: Request, env: Env, id: string): Promise<Response> {
  const body = await readJsonBody(request);
  if (body instanceof Response) return body;
  const limits = limitsOf(body);
  if (typeof limits === 'string') return errorResponse(400, 'invalid_request', limits);
  const device = await devices(env).setLimits(id, limits);
  return device ? Response.json({ device }) : errorResponse(404, 'device_not_found', `No device ${id}. GET /v1/owner/devices lists them.`);
}

function labelOf(value: unknown): string {
  return typeof value === 'string' && value.trim() ? value.trim().slice(0, 80) : 'A device';
}

function limitsOf(body: Record<string, unknown>): Partial<DeviceLimits> | string {
  const limits: Partial<DeviceLimits> = {};
  for (const key of ['requests_per_minute', 'tokens_per_day'] as const) {
    const value = body[key];
    if (value === undefined) continue;
    if (value !== null && !(Number.isInteger(value) && (value as number) > 0)) return `"${key}" must be a whole number above 0, or null for the proxy's default.`;
    limits[key] = value as number | null;
  }
  return limits;
}

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ (b[i] ?? 0);
  return difference === 0;
}
