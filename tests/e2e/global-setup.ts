// Builds the app and starts the scripted model, the real proxy in front of it, and the server of
// the production build. Tests find the fake model's admin URL in E2E_FAKE_URL.
import { serveStack } from '../../scripts/lib/serve.mjs';
import { ensureFixtures } from '../fixtures/generate.ts';
import { startFakeModel } from '../fake-model/server.ts';
import { startTestInternet } from '../support/test-internet.ts';
import { startHttpMcpServer } from '../mcp/http-server.ts';
import { E2E_APP_PORT, E2E_PROXY_PORT, E2E_PROXY_SECRET } from './ports.ts';

export default async function globalSetup() {
  await ensureFixtures((message) => console.log(message));
  const fake = await startFakeModel({ port: 0 });
  // The computer's "internet": a package index and a resolver on this machine, which only this
  // configuration lets the proxy reach.
  const internet = await startTestInternet();
  // A remote MCP server the proxy's owner allows, and one it does not.
  const mcp = await startHttpMcpServer();
  const otherMcp = await startHttpMcpServer();
  const stack = await serveStack({
    mcpAllowedHosts: [new URL(mcp.url).host],
    net: { allowedHosts: ['*.index.test'], allowedPorts: [internet.indexPort], allowPrivate: [internet.indexHost], dnsUpstream: internet.dnsUrl },
    appPort: E2E_APP_PORT,
    proxyPort: E2E_PROXY_PORT,
    apiKey: E2E_PROXY_SECRET,
    upstream: fake.url,
    quiet: true,
  });
  process.env.E2E_FAKE_URL = fake.url;
  process.env.E2E_MCP_URL = mcp.url;
  process.env.E2E_OTHER_MCP_URL = otherMcp.url;
  process.env.E2E_INDEX_PORT = String(internet.indexPort);
  process.env.E2E_BIG_FILE_SHA256 = internet.bigFileSha256;
  // For a test that starts a proxy of its own (and stops it) with the same view of the internet.
  process.env.E2E_INDEX_HOST = internet.indexHost;
  process.env.E2E_DNS_URL = internet.dnsUrl;
  return async () => {
    await stack.close();
    await fake.close();
    await internet.close();
    await mcp.close();
    await otherMcp.close();
  };
}
