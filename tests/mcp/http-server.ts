// The test register as a remote MCP server: Streamable HTTP on loopback, stateless (a server and
// a transport per request, as the SDK's example does).
import { createServer, type Server } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { newServer } from './register.ts';

export async function startHttpMcpServer(port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer(async (request, response) => {
    if (new URL(request.url ?? '/', 'http://x').pathname !== '/mcp') return void response.writeHead(404).end();
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const address = http.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  return { url: `http://127.0.0.1:${actual}/mcp`, close: () => new Promise((resolve) => http.close(() => resolve())) };
}
