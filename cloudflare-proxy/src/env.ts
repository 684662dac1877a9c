// The Worker's bindings: the devices' Durable Object, secrets and plain variables. Secrets and
// variables are optional so a missing one is a clear error response rather than a crash.
import type { DevicesNamespace } from './device-types.ts';

export interface Env {
  /** The paired devices, their tokens (hashed) and limits: one Durable Object named "devices". */
  DEVICES: DevicesNamespace;
  /**
   * Worker secret (`wrangler secret put OWNER_TOKEN`): the owner's credential for handing out
   * pairing codes, listing, limiting and revoking devices. Without it those routes answer 503.
   */
  OWNER_TOKEN?: string;
  /**
   * "1" lets POST /v1/pair/local add a device with no code. Only for the local proxy `npm start`
   * runs on 127.0.0.1 (local.mjs sets it); never in wrangler.toml.
   */
  LOCAL_PAIRING?: string;
  /** Defaults for devices the owner has not limited themselves (defaults 60 and 2,000,000). */
  DEVICE_REQUESTS_PER_MINUTE?: string;
  DEVICE_TOKENS_PER_DAY?: string;
  /**
   * The computer's network: hosts its relay and resolver serve (comma-separated; `*.example.com`
   * for any name under it; default Python's index, npm, Debian and GitHub) and the ports (80,443).
   */
  NET_ALLOWED_HOSTS?: string;
  NET_ALLOWED_PORTS?: string;
  /** Bytes each device's computer may move through the relay in a UTC day, both ways (default 2 GiB). */
  NET_BYTES_PER_DAY?: string;
  /** The DNS-over-HTTPS resolver behind the computer's (default Cloudflare's); tests use their own. */
  DNS_UPSTREAM?: string;
  /**
   * For local tests only: addresses (or address:port) the relay may reach although private. Must
   * stay unset in production, like WEB_FETCH_ALLOW_HOSTS.
   */
  NET_ALLOW_PRIVATE?: string;
  /** How long a device token lasts, in seconds (default a year); tests shorten it. */
  DEVICE_TOKEN_TTL_S?: string;
  /** Worker secret (`wrangler secret put ANTHROPIC_API_KEY`). Never logged, never returned. */
  ANTHROPIC_API_KEY?: string;
  /** Base URL of the Anthropic API; tests point it at a local server. */
  ANTHROPIC_UPSTREAM?: string;
  /**
   * The `anthropic-beta` values devices may send, comma-separated; unset, none (a request with any
   * other is refused with 400 beta_not_allowed).
   */
  ANTHROPIC_BETA_ALLOWED?: string;
  /** How long a reply whose client left is still awaited for its input tokens, in ms (default 15000); tests shorten it. */
  MESSAGES_LEFT_READ_MS?: string;
  /**
   * Worker secret (`wrangler secret put MISTRAL_API_KEY`) for POST /v1/ocr. Optional: without it
   * the app reads scans in the browser. Never logged, never returned.
   */
  MISTRAL_API_KEY?: string;
  /** Base URL of the Mistral API; tests point it at a local server. */
  MISTRAL_UPSTREAM?: string;
  /** Comma-separated exact origins that may call the proxy from a browser. */
  ALLOWED_ORIGINS?: string;
  /**
   * For local tests only: comma-separated exact host:port pairs POST /v1/fetch may reach although
   * they are private (e.g. 127.0.0.1:4000), in the URL or as the address a name resolves to. Must stay unset in production: every entry is a hole
   * in the SSRF guard.
   */
  WEB_FETCH_ALLOW_HOSTS?: string;
  /** POST /v1/fetch's time limit in ms for the whole page, redirects included (default 20000). */
  WEB_FETCH_TIMEOUT_MS?: string;
  /**
   * Worker secret (`wrangler secret put SEARCH_API_KEY`): a Brave Search API key for POST
   * /v1/search. Takes precedence over SEARXNG_URL. Never logged, never returned.
   */
  SEARCH_API_KEY?: string;
  /** Base URL of the Brave Search API; tests point it at a local server. */
  SEARCH_UPSTREAM?: string;
  /** A SearXNG instance (its base URL) for POST /v1/search when no SEARCH_API_KEY is set. */
  SEARXNG_URL?: string;
  /** POST /v1/search's time limit in ms for the search API's answer (default 15000). */
  SEARCH_TIMEOUT_MS?: string;
  /**
   * Comma-separated hosts whose MCP servers devices may reach through /v1/mcp: names
   * (`*.example.com` for any under it) or exact `host:port`, which may be private (a server on the
   * owner's own network). Unset: no remote MCP servers.
   */
  MCP_ALLOWED_HOSTS?: string;
  /** /v1/mcp's time limit in ms for a server to start answering (default 30000). */
  MCP_TIMEOUT_MS?: string;
}

export const DEFAULT_ANTHROPIC_UPSTREAM = 'https://api.anthropic.com';

/** Returns the configured key, or null when unset or blank. */
export function anthropicKey(env: Env): string | null {
  const key = env.ANTHROPIC_API_KEY?.trim();
  return key ? key : null;
}

export const DEFAULT_MISTRAL_UPSTREAM = 'https://api.mistral.ai';

/** Returns the configured Mistral key, or null when unset or blank. */
export function mistralKey(env: Env): string | null {
  const key = env.MISTRAL_API_KEY?.trim();
  return key ? key : null;
}

export const DEFAULT_SEARCH_UPSTREAM = 'https://api.search.brave.com';

/** Returns the configured Brave Search key, or null when unset or blank. */
export function searchKey(env: Env): string | null {
  const key = env.SEARCH_API_KEY?.trim();
  return key ? key : null;
}

/** Returns the configured SearXNG base URL without trailing slashes, or null when unset or blank. */
export function searxngUrl(env: Env): string | null {
  const url = env.SEARXNG_URL?.trim().replace(/\/+$/, '');
  return url ? url : null;
}

/** The one Durable Object holding every device. */
export function devices(env: Env) {
  return env.DEVICES.get(env.DEVICES.idFromName('devices'));
}

export function allowedOrigins(env: Env): string[] {
  return (env.ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
}
