// The Worker's bindings: one secret and two plain variables, all optional so a missing one is a
// clear error response rather than a crash.
export interface Env {
  /** Worker secret (`wrangler secret put ANTHROPIC_API_KEY`). Never logged, never returned. */
  ANTHROPIC_API_KEY?: string;
  /** Base URL of the Anthropic API; tests point it at a local server. */
  ANTHROPIC_UPSTREAM?: string;
  /** Comma-separated exact origins that may call the proxy from a browser. */
  ALLOWED_ORIGINS?: string;
  /**
   * For local tests only: host:port pairs web_fetch may reach although they are private (e.g.
   * 127.0.0.1:4000). Leave unset in production.
   */
  WEB_FETCH_ALLOW_HOSTS?: string;
  /** web_fetch's time limit in ms (default 20 s). */
  WEB_FETCH_TIMEOUT_MS?: string;
}

export const DEFAULT_ANTHROPIC_UPSTREAM = 'https://api.anthropic.com';

/** Returns the configured key, or null when unset or blank. */
export function anthropicKey(env: Env): string | null {
  const key = env.ANTHROPIC_API_KEY?.trim();
  return key ? key : null;
}

export function allowedOrigins(env: Env): string[] {
  return (env.ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
}
