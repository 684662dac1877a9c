// A local stand-in for api.anthropic.com that records every request and answers with whatever the
// current test scripts.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type UpstreamHandler = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>;

export interface FakeUpstream {
  url: string;
  received: ReceivedRequest[];
  /** Sets how the next requests are answered; the default is a 200 JSON `{}`. */
  respond(handler: UpstreamHandler): void;
  close(): Promise<void>;
}

const answerEmptyJson: UpstreamHandler = (_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
};

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const received: ReceivedRequest[] = [];
  let handler = answerEmptyJson;
  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request: ReceivedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks),
      };
      received.push(request);
      Promise.resolve(handler(request, response)).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    respond(next) {
      handler = next;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** A port nothing listens on: bound once to learn a free number, then released. */
export async function unusedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
