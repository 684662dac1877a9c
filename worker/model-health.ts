// Asks the model endpoint whether it can answer, so the chat can say how to connect a model
// before the user types.
import type { ModelStatus } from './protocol.ts';

const TIMEOUT_MS = 5_000;

/** Never throws. */
export async function checkModelEndpoint(endpoint: string, fetchFn: typeof fetch): Promise<ModelStatus> {
  let response: Response;
  try {
    response = await fetchFn(`${endpoint}/health`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    return {
      state: 'unreachable',
      endpoint,
      message: `Could not reach the model endpoint at ${endpoint}: you may be offline, or the proxy is not running. Start it with \`npm start\`, or choose another endpoint in Settings.`,
    };
  }
  const body = (await response.json().catch(() => null)) as { anthropic?: unknown } | null;
  if (!response.ok || !body || typeof body.anthropic !== 'boolean') {
    return {
      state: 'unreachable',
      endpoint,
      message: `${endpoint} answered ${response.status} to /health: it does not look like a Stackdocs proxy. Check the endpoint in Settings.`,
    };
  }
  if (!body.anthropic) {
    return {
      state: 'not_configured',
      endpoint,
      message:
        `No model is connected: the proxy at ${endpoint} has no Anthropic API key. ` +
        'Run `ANTHROPIC_API_KEY=<your key> npm start`, or on a deployed proxy ' +
        '`npx wrangler secret put ANTHROPIC_API_KEY`. Everything else works without a model.',
    };
  }
  return { state: 'ready', endpoint };
}
