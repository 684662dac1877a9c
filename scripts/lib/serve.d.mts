// Types for serve.mjs, for TypeScript callers (end-to-end setup, benchmarks).
export interface ServeOptions {
  host?: string;
  appPort: number;
  proxyPort: number;
  apiKey?: string;
  upstream?: string;
  mistralApiKey?: string;
  mistralUpstream?: string;
  /** The owner's token for handing out pairing codes (`npm run pair`). */
  ownerToken?: string;
  /** A folder keeping the paired devices across restarts. */
  persistTo?: string;
  /** The proxy pairs the app it serves by itself (default true). */
  localPairing?: boolean;
  /** The computer's network settings of the proxy (tests point it at their own servers). */
  net?: { allowedHosts?: string[]; allowedPorts?: number[]; allowPrivate?: string[]; dnsUpstream?: string };
  /** Hosts (or exact host:port) whose MCP servers the proxy forwards to (/v1/mcp). */
  mcpAllowedHosts?: string[];
  /** `anthropic-beta` values the proxy passes on /v1/messages (default none). */
  anthropicBetaAllowed?: string[];
  /** Bytes each device's computer may move through the relay in a UTC day (default 2 GiB). */
  netBytesPerDay?: number;
  skipBuild?: boolean;
  quiet?: boolean;
}
export interface ServedStack {
  appUrl: string;
  proxyUrl: string;
  close(): Promise<void>;
}
export function serveStack(options: ServeOptions): Promise<ServedStack>;
/** `proxyUrl: ''`: no proxy (a static host); `outDir`: instead of dist/. */
export function buildApp(options: { proxyUrl: string; quiet?: boolean; outDir?: string }): Promise<void>;
export function assertPortFree(port: number, host: string, what: string): Promise<void>;
