// Runs the proxy Worker on this machine under Miniflare (the workerd runtime that Cloudflare runs),
// for `npm start` and tests. Run directly: `node cloudflare-proxy/local.mjs`.
import { Miniflare } from 'miniflare';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildWorker } from './build.mjs';

/**
 * @typedef {object} LocalProxyOptions
 * @property {number} [port] Port to listen on; 0 picks a free one. Default 8787.
 * @property {string} [host] Interface to listen on. Default 127.0.0.1.
 * @property {string} [upstream] Anthropic API base URL. Default https://api.anthropic.com.
 * @property {string} [apiKey] Anthropic API key; without one, /v1/messages answers 503.
 * @property {string} [mistralUpstream] Mistral API base URL. Default https://api.mistral.ai.
 * @property {string} [mistralApiKey] Mistral API key; without one, /v1/ocr answers 503.
 * @property {readonly string[]} [allowedOrigins] Browser origins allowed; default wrangler.toml's.
 * @property {string} [ownerToken] The owner's token for the device routes (`npm run pair`); without it they answer 503.
 * @property {boolean} [localPairing] Let the app pair with no code (POST /v1/pair/local): for `npm start` and tests only.
 * @property {string} [persistTo] A folder keeping the paired devices across restarts; default: in memory.
 * @property {number} [deviceRequestsPerMinute] Default per-device limit (the Worker's default: 60).
 * @property {number} [deviceTokensPerDay] Default per-device limit (the Worker's default: 2,000,000).
 * @property {number} [deviceTokenTtlS] How long a device token lasts (default a year); tests shorten it.
 * @property {readonly string[]} [netAllowedHosts] Hosts the computer's network may reach (default: package indexes, Debian, GitHub).
 * @property {readonly number[]} [netAllowedPorts] Ports it may reach (default 80, 443).
 * @property {readonly string[]} [netAllowPrivate] Tests only: private addresses (or address:port) the relay may reach.
 * @property {string} [dnsUpstream] The DNS-over-HTTPS resolver behind the computer's (default Cloudflare's).
 * @property {string} [searchApiKey] Brave Search API key for /v1/search (web_search); it wins over searxngUrl.
 * @property {string} [searchUpstream] Brave Search API base URL. Default https://api.search.brave.com.
 * @property {string} [searxngUrl] A SearXNG instance's base URL for /v1/search when there is no searchApiKey; with neither, it answers 503.
 * @property {number} [searchTimeoutMs] /v1/search's time limit in ms (default 15 s); tests shorten it.
 * @property {readonly string[]} [mcpAllowedHosts] Hosts (or exact host:port) whose MCP servers devices may reach through /v1/mcp.
 * @property {number} [netBytesPerDay] Bytes each device's computer may move through the relay a day (default 2 GiB).
 * @property {readonly string[]} [anthropicBetaAllowed] `anthropic-beta` values devices may send (default none).
 */

/**
 * @typedef {object} LocalProxy
 * @property {string} url Origin the proxy listens on, e.g. http://127.0.0.1:8787 (real port).
 * @property {() => Promise<void>} dispose Stops the runtime; safe to call more than once.
 */

const wranglerTomlPath = fileURLToPath(new URL('./wrangler.toml', import.meta.url));

/**
 * Reads the two settings local runs share with deployment, so they cannot drift. wrangler.toml is
 * ours and keeps each on one line; a missing one is an error, not a silent default.
 * @returns {Promise<{ compatibilityDate: string, compatibilityFlags: string[], allowedOrigins: string[] }>}
 */
async function readWranglerConfig() {
  const toml = await readFile(wranglerTomlPath, 'utf8');
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  const flags = [.../^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1]?.matchAll(/"([^"]+)"/g) ?? []].map((m) => m[1]);
  const origins = /^ALLOWED_ORIGINS\s*=\s*"([^"]*)"/m.exec(toml)?.[1];
  if (date === undefined || origins === undefined) {
    throw new Error(`${wranglerTomlPath} must set compatibility_date and [vars] ALLOWED_ORIGINS`);
  }
  return { compatibilityDate: date, compatibilityFlags: flags, allowedOrigins: splitList(origins) };
}

/** @param {string} list */
function splitList(list) {
  return list.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
}

/**
 * Builds the Worker and starts it under Miniflare. Resolves once it accepts requests; rejects (with
 * nothing left running) if the build or the runtime fails.
 * @param {LocalProxyOptions} [options]
 * @returns {Promise<LocalProxy>}
 */
export async function startLocalProxy({
  port = 8787,
  host = '127.0.0.1',
  upstream,
  apiKey,
  mistralUpstream,
  mistralApiKey,
  allowedOrigins,
  webFetchAllowHosts,
  webFetchTimeoutMs,
  ownerToken,
  localPairing = false,
  persistTo,
  deviceRequestsPerMinute,
  deviceTokensPerDay,
  deviceTokenTtlS,
  netAllowedHosts,
  netAllowedPorts,
  netAllowPrivate,
  dnsUpstream,
  searchApiKey,
  searchUpstream,
  searxngUrl,
  searchTimeoutMs,
  mcpAllowedHosts,
  anthropicBetaAllowed,
  netBytesPerDay,
} = {}) {
  const [scriptPath, config] = await Promise.all([buildWorker(), readWranglerConfig()]);
  /** @type {Record<string, string>} */
  const bindings = { ALLOWED_ORIGINS: (allowedOrigins ?? config.allowedOrigins).join(',') };
  if (upstream) bindings.ANTHROPIC_UPSTREAM = upstream;
  // Absent rather than empty, as in production when the secret was never set.
  if (apiKey) bindings.ANTHROPIC_API_KEY = apiKey;
  if (mistralUpstream) bindings.MISTRAL_UPSTREAM = mistralUpstream;
  if (mistralApiKey) bindings.MISTRAL_API_KEY = mistralApiKey;
  // Tests only: lets web_fetch reach their local pages.
  if (webFetchAllowHosts?.length) bindings.WEB_FETCH_ALLOW_HOSTS = webFetchAllowHosts.join(',');
  if (webFetchTimeoutMs) bindings.WEB_FETCH_TIMEOUT_MS = String(webFetchTimeoutMs);
  if (ownerToken) bindings.OWNER_TOKEN = ownerToken;
  if (localPairing) bindings.LOCAL_PAIRING = '1';
  if (deviceRequestsPerMinute) bindings.DEVICE_REQUESTS_PER_MINUTE = String(deviceRequestsPerMinute);
  if (deviceTokensPerDay) bindings.DEVICE_TOKENS_PER_DAY = String(deviceTokensPerDay);
  if (deviceTokenTtlS) bindings.DEVICE_TOKEN_TTL_S = String(deviceTokenTtlS);
  if (netAllowedHosts?.length) bindings.NET_ALLOWED_HOSTS = netAllowedHosts.join(',');
  if (netAllowedPorts?.length) bindings.NET_ALLOWED_PORTS = netAllowedPorts.join(',');
  if (netBytesPerDay) bindings.NET_BYTES_PER_DAY = String(netBytesPerDay);
  // Tests only: lets the relay reach their loopback servers.
  if (netAllowPrivate?.length) bindings.NET_ALLOW_PRIVATE = netAllowPrivate.join(',');
  if (dnsUpstream) bindings.DNS_UPSTREAM = dnsUpstream;
  if (searchApiKey) bindings.SEARCH_API_KEY = searchApiKey;
  if (searchUpstream) bindings.SEARCH_UPSTREAM = searchUpstream;
  if (searxngUrl) bindings.SEARXNG_URL = searxngUrl;
  if (searchTimeoutMs) bindings.SEARCH_TIMEOUT_MS = String(searchTimeoutMs);
  if (mcpAllowedHosts?.length) bindings.MCP_ALLOWED_HOSTS = mcpAllowedHosts.join(',');
  if (anthropicBetaAllowed?.length) bindings.ANTHROPIC_BETA_ALLOWED = anthropicBetaAllowed.join(',');

  const miniflare = new Miniflare({
    modules: true,
    scriptPath,
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
    bindings,
    // As wrangler.toml declares it: one Durable Object class with SQLite storage.
    durableObjects: { DEVICES: { className: 'Devices', useSQLite: true } },
    durableObjectsPersist: persistTo ?? false,
    port,
    host,
  });
  /** @type {URL} */
  let ready;
  try {
    ready = await miniflare.ready;
  } catch (error) {
    await miniflare.dispose().catch(() => {});
    throw error;
  }

  /** @type {Promise<void> | undefined} */
  let disposing;
  return {
    url: ready.origin,
    dispose: () => (disposing ??= miniflare.dispose()),
  };
}

/** @param {string | undefined} value */
function parsePort(value) {
  if (value === undefined || value === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PROXY_PORT must be a port number (0-65535), got "${value}"`);
  }
  return port;
}

async function main() {
  const env = process.env;
  const apiKey = env.ANTHROPIC_API_KEY || undefined;
  const mistralApiKey = env.MISTRAL_API_KEY || undefined;
  const searchApiKey = env.SEARCH_API_KEY || undefined;
  const searxngUrl = env.SEARXNG_URL || undefined;
  const proxy = await startLocalProxy({
    port: parsePort(env.PROXY_PORT),
    host: env.PROXY_HOST || undefined,
    upstream: env.ANTHROPIC_UPSTREAM || undefined,
    apiKey,
    mistralUpstream: env.MISTRAL_UPSTREAM || undefined,
    mistralApiKey,
    allowedOrigins: env.ALLOWED_ORIGINS ? splitList(env.ALLOWED_ORIGINS) : undefined,
    ownerToken: env.OWNER_TOKEN || undefined,
    localPairing: env.LOCAL_PAIRING === '1',
    persistTo: env.PROXY_STATE_DIR || undefined,
    searchApiKey,
    searchUpstream: env.SEARCH_UPSTREAM || undefined,
    searxngUrl,
    anthropicBetaAllowed: env.ANTHROPIC_BETA_ALLOWED ? splitList(env.ANTHROPIC_BETA_ALLOWED) : undefined,
    netBytesPerDay: Number(env.NET_BYTES_PER_DAY) > 0 ? Number(env.NET_BYTES_PER_DAY) : undefined,
    dnsUpstream: env.DNS_UPSTREAM || undefined,
  });
  const keyState = apiKey ? 'Anthropic key configured' : 'no Anthropic key: set ANTHROPIC_API_KEY';
  const ocrState = mistralApiKey ? 'Mistral OCR key configured' : 'no Mistral OCR key (optional)';
  const searchState = searchApiKey ? 'web search by Brave' : searxngUrl ? 'web search by SearXNG' : 'no web search (optional)';
  console.log(`Stackdocs proxy listening on ${proxy.url} (${keyState}; ${ocrState}; ${searchState})`);

  const stop = () => {
    proxy.dispose().then(
      () => process.exit(0),
      (error) => {
        console.error('Stackdocs proxy: failed to stop cleanly:', error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`Stackdocs proxy failed to start: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  });
}
