// Builds the app and serves the production build beside the local proxy: what `npm start` runs,
// and what the end-to-end tests and benchmarks run on their own ports.
import { createServer } from 'node:net';
import { build, preview } from 'vite';
import { startLocalProxy } from '../../cloudflare-proxy/local.mjs';
import { root } from './setup.mjs';

/** Fails early, with a clear message, when a port is taken. */
export async function assertPortFree(port, host, what) {
  await new Promise((resolve, reject) => {
    const probe = createServer()
      .once('error', () =>
        reject(new Error(`Port ${port} on ${host} is in use, so the ${what} cannot start. Is Stackdocs already running? Stop it, or pick another port.`)),
      )
      .once('listening', () => probe.close(resolve))
      .listen(port, host);
  });
}

/**
 * The production build, with the proxy's address as the default model endpoint (none: `''`, as a
 * static host without a proxy gets), into `outDir` (default dist/).
 */
export async function buildApp({ proxyUrl, quiet = false, outDir = undefined }) {
  process.env.VITE_PROXY_URL = proxyUrl;
  await build({ root, logLevel: quiet ? 'warn' : 'info', ...(outDir ? { build: { outDir, emptyOutDir: true } } : {}) });
}

/**
 * Starts the local proxy and serves dist/. Resolves to the URLs and a `close()` that stops both.
 * The proxy pairs the app it serves by itself (`localPairing`, on 127.0.0.1 only); `ownerToken` lets
 * `npm run pair` hand out codes for other devices; `persistTo` keeps the paired devices across restarts.
 * `net`: the computer's network settings of the proxy (tests point it at their own servers);
 * `mcpAllowedHosts`: the remote MCP servers' hosts it forwards to; `anthropicBetaAllowed`: the
 * `anthropic-beta` values it passes (none by default); `netBytesPerDay`: each device's relay bytes a day.
 * @param {{ host?: string, appPort: number, proxyPort: number, apiKey?: string, upstream?: string, mistralApiKey?: string, mistralUpstream?: string, search?: { apiKey?: string, upstream?: string, searxngUrl?: string }, ownerToken?: string, persistTo?: string, localPairing?: boolean, net?: { allowedHosts?: string[], allowedPorts?: number[], allowPrivate?: string[], dnsUpstream?: string }, mcpAllowedHosts?: string[], anthropicBetaAllowed?: string[], netBytesPerDay?: number, skipBuild?: boolean, quiet?: boolean }} options
 */
export async function serveStack({ host = '127.0.0.1', appPort, proxyPort, apiKey, upstream, mistralApiKey, mistralUpstream, search, ownerToken, persistTo, localPairing = true, net, mcpAllowedHosts, anthropicBetaAllowed, netBytesPerDay, skipBuild = false, quiet = false }) {
  await assertPortFree(proxyPort, host, 'model proxy');
  await assertPortFree(appPort, host, 'app server');
  const proxyUrl = `http://${host}:${proxyPort}`;
  if (!skipBuild) await buildApp({ proxyUrl, quiet });
  const appOrigins = [`http://${host}:${appPort}`, `http://localhost:${appPort}`];
  const proxy = await startLocalProxy({ port: proxyPort, host, apiKey, upstream, mistralApiKey, mistralUpstream, searchApiKey: search?.apiKey, searchUpstream: search?.upstream, searxngUrl: search?.searxngUrl, allowedOrigins: appOrigins, ownerToken, persistTo, localPairing,
    netAllowedHosts: net?.allowedHosts, netAllowedPorts: net?.allowedPorts, netAllowPrivate: net?.allowPrivate, dnsUpstream: net?.dnsUpstream, mcpAllowedHosts, anthropicBetaAllowed, netBytesPerDay,
    // The machine's own user: an agent, a benchmark or a test may call the model often.
    deviceRequestsPerMinute: 600 });
  const server = await preview({ root, logLevel: quiet ? 'silent' : 'warn', preview: { port: appPort, host, strictPort: true, open: false } });
  return {
    appUrl: appOrigins[0],
    proxyUrl: proxy.url,
    async close() {
      await new Promise((resolve) => server.httpServer.close(resolve));
      await proxy.dispose();
    },
  };
}
