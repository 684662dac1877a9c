// Types for local.mjs, so TypeScript callers (`npm start`, tests, benchmarks) get them.

export interface LocalProxyOptions {
  /** Port to listen on; 0 picks a free one. Default 8787. */
  port?: number;
  /** Interface to listen on. Default 127.0.0.1. */
  host?: string;
  /** Anthropic API base URL. Default https://api.anthropic.com. */
  upstream?: string;
  /** Anthropic API key; without one, POST /v1/messages answers 503 proxy_not_configured. */
  apiKey?: string;
  /** Mistral API base URL. Default https://api.mistral.ai. */
  mistralUpstream?: string;
  /** Mistral API key; without one, POST /v1/ocr answers 503 proxy_not_configured. */
  mistralApiKey?: string;
  /** Browser origins allowed to call the proxy. Default: ALLOWED_ORIGINS in wrangler.toml. */
  allowedOrigins?: readonly string[];
  /** Tests only: host:port pairs web_fetch may reach although they are private. */
  webFetchAllowHosts?: readonly string[];
  /** web_fetch's time limit in ms (default 20 s). */
  webFetchTimeoutMs?: number;
  /** The owner's token for the device routes (`npm run pair`); without it they answer 503. */
  ownerToken?: string;
  /** Lets the app pair with no code (POST /v1/pair/local): for `npm start` and tests only. */
  localPairing?: boolean;
  /** A folder keeping the paired devices across restarts. Default: in memory. */
  persistTo?: string;
  /** Default per-device limits (the Worker's defaults: 60 a minute, 2,000,000 tokens a day). */
  deviceRequestsPerMinute?: number;
  deviceTokensPerDay?: number;
  /** How long a device token lasts, in seconds (default a year); tests shorten it. */
  deviceTokenTtlS?: number;
  /** Hosts the computer's network may reach; `*.example.com` for any name under it. */
  netAllowedHosts?: readonly string[];
  /** Ports it may reach (default 80, 443). */
  netAllowedPorts?: readonly number[];
  /** Bytes each device's computer may move through the relay in a UTC day (default 2 GiB). */
  netBytesPerDay?: number;
  /** Tests only: private addresses (or address:port) the relay may reach. */
  netAllowPrivate?: readonly string[];
  /** The DNS-over-HTTPS resolver behind the computer's (default Cloudflare's). */
  dnsUpstream?: string;
  /** Brave Search API key for POST /v1/search (web_search); it wins over `searxngUrl`. */
  searchApiKey?: string;
  /** Brave Search API base URL. Default https://api.search.brave.com. */
  searchUpstream?: string;
  /** A SearXNG instance's base URL for POST /v1/search when there is no `searchApiKey`; with neither, it answers 503 search_not_configured. */
  searxngUrl?: string;
  /** POST /v1/search's time limit in ms (default 15 s). */
  searchTimeoutMs?: number;
  /** Hosts (or exact `host:port`, which may be private) whose MCP servers devices may reach through /v1/mcp. */
  mcpAllowedHosts?: readonly string[];
  /** `anthropic-beta` values devices may send on /v1/messages (default none: any other is refused). */
  anthropicBetaAllowed?: readonly string[];
}

export interface LocalProxy {
  /** Origin the proxy listens on, with the real port, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** Stops the runtime; safe to call more than once. */
  dispose(): Promise<void>;
}

/**
 * Builds the Worker and runs it under Miniflare. Resolves once it accepts requests; rejects, with
 * nothing left running, if the build or the runtime fails.
 */
export function startLocalProxy(options?: LocalProxyOptions): Promise<LocalProxy>;
