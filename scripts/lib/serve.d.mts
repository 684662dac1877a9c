// Types for serve.mjs, for TypeScript callers (end-to-end setup, benchmarks).
export interface ServeOptions {
  host?: string;
  appPort: number;
  proxyPort: number;
  apiKey?: string;
  upstream?: string;
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
