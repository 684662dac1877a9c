// Asks the model endpoint whether it can answer, so the chat can say how to connect a model
// before the user types.
import type { ModelStatus, Provider, ProxyNetwork } from '../protocol/settings.ts';

const TIMEOUT_MS = 5_000;

export interface ModelConnection {
  provider: Provider;
  endpoint: string;
  /** The user's own key, for the direct providers only. */
  apiKey: string | null;
  /** This browser's token with the proxy, for the proxy only. */
  deviceToken: string | null;
}

/** Never throws. */
export async function checkModel(connection: ModelConnection, fetchFn: typeof fetch): Promise<ModelStatus> {
  const { endpoint } = connection;
  switch (connection.provider) {
    case 'proxy':
      return checkModelEndpoint(endpoint, fetchFn, connection.deviceToken);
    case 'anthropic':
      // Checking the key would cost a request; the first message will say if Anthropic refuses it.
      return connection.apiKey
        ? { state: 'ready', endpoint }
        : { state: 'not_configured', endpoint, message: 'No model connected: enter your Anthropic API key in Settings, or choose the Stackdocs proxy or a local model server there.' };
    case 'openai':
      try {
        const response = await fetchFn(`${endpoint}/models`, {
          signal: AbortSignal.timeout(TIMEOUT_MS),
          ...(connection.apiKey ? { headers: { authorization: `Bearer ${connection.apiKey}` } } : {}),
        });
        if (response.ok) return { state: 'ready', endpoint };
        return { state: 'unreachable', endpoint, message: `${endpoint}/models answered ${response.status}. Check the endpoint and key in Settings.` };
      } catch {
        return { state: 'unreachable', endpoint, message: `Could not reach the model server at ${endpoint}. Is it running?` };
      }
  }
}

/** The proxy's /health, then whether it knows this device (GET /v1/device). Never throws. */
export async function checkModelEndpoint(endpoint: string, fetchFn: typeof fetch, deviceToken: string | null = null): Promise<ModelStatus> {
  const unreachable: ModelStatus = {
    state: 'unreachable',
    endpoint,
    message: `Could not reach the model endpoint at ${endpoint}: you may be offline, or the proxy is not running. Start it with \`npm start\`, or choose another endpoint in Settings.`,
  };
  let response: Response;
  try {
    response = await fetchFn(`${endpoint}/health`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    return unreachable;
  }
  const body = (await response.json().catch(() => null)) as { anthropic?: unknown; pairing?: unknown } | null;
  if (!response.ok || !body || typeof body.anthropic !== 'boolean') {
    return {
      state: 'unreachable',
      endpoint,
      message: `${endpoint} answered ${response.status} to /health: it does not look like a Stackdocs proxy. Check the endpoint in Settings.`,
    };
  }
  const pairing = body.pairing === 'local' ? 'local' : 'code';
  let device: Response;
  try {
    device = await fetchFn(`${endpoint}/v1/device`, {
      signal: AbortSignal.timeout(TIMEOUT_MS),
      credentials: 'omit',
      ...(deviceToken ? { headers: { authorization: `Bearer ${deviceToken}` } } : {}),
    });
  } catch {
    return unreachable;
  }
  const known = (await device.json().catch(() => null)) as { device?: { label?: unknown }; network?: unknown; error?: { message?: unknown } } | null;
  if (device.status === 401) {
    const said = typeof known?.error?.message === 'string' ? known.error.message : 'This device is not paired with the proxy.';
    return { state: 'not_configured', endpoint, pairing, message: said };
  }
  // 429 (over this minute's or today's limit) still means paired: the chat says the rest.
  const label = typeof known?.device?.label === 'string' ? known.device.label : undefined;
  const network = proxyNetwork(known?.network);
  const paired = { ...(label ? { device: label } : {}), ...(network ? { network } : {}) };
  if (!body.anthropic) {
    return {
      state: 'not_configured',
      endpoint,
      message:
        `No model is connected: the proxy at ${endpoint} has no Anthropic API key. ` +
        'Run `ANTHROPIC_API_KEY=<your key> npm start`, or on a deployed proxy ' +
        '`npx wrangler secret put ANTHROPIC_API_KEY`. Everything else works without a model.',
      ...paired,
    };
  }
  return { state: 'ready', endpoint, ...paired };
}

/** The `network` of GET /v1/device; undefined from a proxy that does not say (or says it wrongly). */
function proxyNetwork(value: unknown): ProxyNetwork | undefined {
  const said = value as { hosts?: unknown; ports?: unknown } | null | undefined;
  if (!Array.isArray(said?.hosts) || !Array.isArray(said.ports)) return undefined;
  if (!said.hosts.every((host) => typeof host === 'string') || !said.ports.every((port) => Number.isInteger(port))) return undefined;
  return { hosts: said.hosts as string[], ports: said.ports as number[] };
}
