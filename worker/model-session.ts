// How a stack reaches out: the model's connection (provider, endpoint, key or this device's token),
// calls to the proxy carrying the device's token (web pages, OCR, remote MCP servers), the
// computer's network ticket for the proxy's relay, and the model's status, checked one at a time.
import type { ModelStatus, Settings } from '../protocol/settings.ts';
import type { VmNetwork } from '../vm/protocol.ts';
import type { Computer, ComputerNetwork } from './computer.ts';
import { pairDevice, type DeviceCredentials } from './device.ts';
import { checkModel as checkModelConnection, type ModelConnection } from './model-health.ts';
import { loadApiKey } from './settings.ts';
import type { StackDeps } from './stack-deps.ts';
import type { StackEventBody } from '../protocol/events.ts';

/** A network ticket is renewed this long before it ends (the proxy's last 12 h). */
const TICKET_MARGIN_MS = 3_600_000;

export interface ModelSession {
  connection(): Promise<ModelConnection>;
  /** fetch, with this device's token on calls to the proxy in the settings (nothing else gets it). */
  proxyFetch: typeof fetch;
  /** The computer's network now: a relay ticket, or why there is none. */
  computerNetwork(): Promise<ComputerNetwork>;
  /** Asks the model endpoint (and pairs with a local proxy that allows it); emits `model_status`. */
  checkModel(): Promise<ModelStatus>;
  /** The last status a check found. */
  readonly model: ModelStatus;
  /** Where a remote MCP server is reached: through the proxy, or refused with why. */
  remoteMcp(url: string, own: Record<string, string>): { url: URL; fetch: typeof fetch } | { refused: string };
  /** Waits for a check under way and stops renewing the ticket. */
  close(): Promise<void>;
}

export function createModelSession(options: {
  deps: Pick<StackDeps, 'fetch' | 'storage' | 'deviceLabel'>;
  credentials: DeviceCredentials;
  settings: () => Settings;
  computer: () => Computer | undefined;
  emit(event: StackEventBody): void;
}): ModelSession {
  const { deps, credentials, settings, computer, emit } = options;
  // The computer's network: through the proxy, for a paired device, with a ticket for the relay
  // and the resolver only (never the device token), unless the user turned it off for this stack.
  // Asked at each start of the computer and when Settings or pairing change (a running computer
  // takes it at once). Without one, says why (the guest's [network] lines repeat it).
  let ticket: { network: VmNetwork; expires: number } | null = null;
  let ticketRefresh: ReturnType<typeof setTimeout> | null = null;
  let model: ModelStatus = { state: 'unknown' };
  const endpoint = () => settings().endpoint.replace(/\/+$/, '');
  const deviceToken = async () => (settings().provider === 'proxy' ? ((await credentials.get(settings().endpoint))?.token ?? null) : null);

  async function networkNow(): Promise<ComputerNetwork> {
    const now = settings();
    if (!now.computer_network) return { network: null, offline: 'its network is turned off for this stack in Settings' };
    if (now.provider !== 'proxy') return { network: null, offline: 'it reaches the internet only through a Stackdocs proxy; choose one in Settings' };
    const token = await deviceToken();
    if (!token) return { network: null, offline: 'this device is not paired with the proxy; pair it in Settings' };
    const base = endpoint();
    if (ticket && ticket.expires > Date.now() + TICKET_MARGIN_MS && ticket.network.dnsUrl === `${base}/dns-query`) return { network: ticket.network };
    let response: Response;
    try {
      response = await deps.fetch(`${base}/v1/net/ticket`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, credentials: 'omit', signal: AbortSignal.timeout(10_000) });
    } catch {
      return { network: null, offline: 'the proxy could not be reached when it started' };
    }
    if (response.status === 401) return { network: null, offline: 'the proxy no longer accepts this device; pair it again in Settings' };
    if (!response.ok) return { network: null, offline: `the proxy refused it a network ticket (HTTP ${response.status})` };
    const body = (await response.json()) as { ticket: string; expires_at: string; wisp_path: string; dns_path: string };
    const network = { relayUrl: `${base.replace(/^http/, 'ws')}${body.wisp_path}?ticket=${encodeURIComponent(body.ticket)}`, dnsUrl: `${base}${body.dns_path}`, ticket: body.ticket };
    ticket = { network, expires: Date.parse(body.expires_at) };
    // A computer that runs for days (a kiosk) gets a fresh ticket an hour before this one ends:
    // its lookups carry the ticket, and the relay checks it at each new socket.
    if (ticketRefresh) clearTimeout(ticketRefresh);
    ticketRefresh = setTimeout(() => {
      ticketRefresh = null;
      void computer()?.networkChanged().catch((error: unknown) => console.warn('the computer could not take its new network ticket', error));
    }, Math.max(60_000, ticket.expires - Date.now() - TICKET_MARGIN_MS + 1_000));
    return { network };
  }

  const connection = async (): Promise<ModelConnection> => ({
    provider: settings().provider,
    endpoint: settings().endpoint,
    apiKey: settings().provider === 'proxy' ? null : await loadApiKey(deps.storage),
    deviceToken: await deviceToken(),
  });

  const proxyFetch: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const token = await deviceToken();
    if (!token || !url.startsWith(`${endpoint()}/`)) return deps.fetch(input, init);
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return deps.fetch(input, { ...init, headers });
  };

  // One check at a time: a local pairing must not happen twice at once.
  let checking: Promise<unknown> = Promise.resolve();
  function checkModel(): Promise<ModelStatus> {
    const next = checking.then(async () => {
      let status = await checkModelConnection(await connection(), deps.fetch);
      // The local proxy of `npm start` pairs the app it serves by itself.
      if (status.state === 'not_configured' && status.pairing === 'local') {
        const at = settings().endpoint;
        const credential = await pairDevice(at, null, deps.deviceLabel ?? 'Stackdocs', deps.fetch).catch(() => null);
        if (credential) {
          await credentials.set(at, credential);
          status = await checkModelConnection(await connection(), deps.fetch);
        }
      }
      model = status;
      emit({ type: 'model_status', status: model });
      // A new endpoint, a pairing or its end: the running computer's network follows.
      void computer()?.networkChanged().catch((error: unknown) => console.warn('the computer could not take its new network', error));
      return model;
    });
    checking = next.catch(() => {});
    return next;
  }

  return {
    connection,
    proxyFetch,
    async computerNetwork() {
      const given = await networkNow();
      // Unpaired, turned off or refused: the next network gets a ticket of its own.
      if (!given.network) {
        ticket = null;
        if (ticketRefresh) clearTimeout(ticketRefresh);
      }
      return given;
    },
    checkModel,
    get model() {
      return model;
    },
    remoteMcp(url, own) {
      if (settings().provider !== 'proxy') return { refused: 'remote MCP servers are reached through the proxy, and this stack talks to the model directly (Settings)' };
      // The proxy forwards to the server's address (given in a header) when its owner allows that
      // host; the server's own headers ride inside one of ours, as `authorization` is the device's.
      return {
        url: new URL(`${endpoint()}/v1/mcp`),
        fetch: (input, init) => {
          const headers = new Headers(init?.headers);
          headers.set('x-mcp-url', url);
          if (Object.keys(own).length) headers.set('x-mcp-headers', JSON.stringify(own));
          return proxyFetch(input, { ...init, headers });
        },
      };
    },
    async close() {
      if (ticketRefresh) clearTimeout(ticketRefresh);
      await checking;
    },
  };
}
