// `npm start`: installs what is missing, builds, starts the local proxy and serves the app.
import { ensureDependencies, ensureVmImage, step } from './lib/setup.mjs';

try {
  ensureDependencies();
  ensureVmImage();
  const { serveStack } = await import('./lib/serve.mjs');
  const { forgetLocalProxyUrl, localOwnerToken, proxyStateDir, recordLocalProxyUrl } = await import('./lib/owner.mjs');
  const appPort = Number(process.env.PORT ?? 4173);
  const proxyPort = Number(process.env.PROXY_PORT ?? 8787);
  const apiKey = process.env.ANTHROPIC_API_KEY || undefined;
  step('Building and starting Stackdocs');
  const stack = await serveStack({
    appPort,
    proxyPort,
    apiKey,
    upstream: process.env.ANTHROPIC_UPSTREAM || undefined,
    // Mistral OCR (Settings > Read scans with) when a key is given.
    mistralApiKey: process.env.MISTRAL_API_KEY || undefined,
    mistralUpstream: process.env.MISTRAL_UPSTREAM || undefined,
    // The agent's web_search: Brave Search with a key, or the user's own SearXNG.
    search: { apiKey: process.env.SEARCH_API_KEY || undefined, upstream: process.env.SEARCH_UPSTREAM || undefined, searxngUrl: process.env.SEARXNG_URL || undefined },
    // The app served here pairs by itself; `npm run pair` hands out codes for other devices.
    // The proxy's limits the owner may set, as for a deployed one (cloudflare-proxy/README.md).
    anthropicBetaAllowed: process.env.ANTHROPIC_BETA_ALLOWED ? process.env.ANTHROPIC_BETA_ALLOWED.split(',').map((beta) => beta.trim()).filter(Boolean) : undefined,
    netBytesPerDay: Number(process.env.NET_BYTES_PER_DAY) > 0 ? Number(process.env.NET_BYTES_PER_DAY) : undefined,
    // The resolver web_fetch checks names with (it refuses names it cannot look up).
    net: process.env.DNS_UPSTREAM ? { dnsUpstream: process.env.DNS_UPSTREAM } : undefined,
    ownerToken: localOwnerToken(),
    persistTo: proxyStateDir,
  });
  // `npm run pair` finds this proxy whatever PROXY_PORT it was given.
  recordLocalProxyUrl(stack.proxyUrl);
  console.log(`\nStackdocs is running at ${stack.appUrl}\n`);
  console.log(`  Model proxy  ${stack.proxyUrl}`);
  console.log(
    apiKey
      ? '  Model        ANTHROPIC_API_KEY is set: the proxy holds it; the browser never sees it.'
      : '  Model        no ANTHROPIC_API_KEY: the app works, and the chat says how to connect a model.',
  );
  console.log(
    process.env.SEARCH_API_KEY || process.env.SEARXNG_URL
      ? `  Web search   ${process.env.SEARCH_API_KEY ? 'Brave Search (SEARCH_API_KEY)' : `SearXNG at ${process.env.SEARXNG_URL}`}`
      : '  Web search   off: set SEARCH_API_KEY (Brave Search) or SEARXNG_URL to turn it on.',
  );
  console.log('  Devices      this browser pairs by itself; for another device, `npm run pair` prints a code.');
  console.log('\nPress Ctrl+C to stop.');
  const stop = async () => {
    forgetLocalProxyUrl();
    await stack.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  console.error(`\nnpm start failed: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
