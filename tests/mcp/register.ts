// The test MCP server's tools (tests/mcp/test-server.ts runs them over stdio in the computer,
// tests/mcp/http-server.ts over Streamable HTTP on loopback).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** A made-up register: the same company always gets the same number. */
function vatNumber(company: string): string {
  let hash = 7;
  for (const char of company.toLowerCase()) hash = (hash * 31 + char.charCodeAt(0)) % 1_000_000_007;
  return `GB${String(hash % 1_000_000_000).padStart(9, '0')}`;
}

export function newServer(): McpServer {
  const server = new McpServer({ name: 'stackdocs-test-register', version: '1.0.0' });
  server.registerTool(
    'vat_number',
    { description: "Looks up a company's VAT number in the test register.", inputSchema: { company: z.string().min(1).describe('The company name') } },
    async ({ company }) => ({ content: [{ type: 'text', text: `${company}: ${vatNumber(company)} (pid ${process.pid})` }] }),
  );
  server.registerTool(
    'wait',
    { description: 'Waits a number of seconds, then says so.', inputSchema: { seconds: z.number().min(0).max(600) } },
    async ({ seconds }) => {
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      return { content: [{ type: 'text', text: `waited ${seconds} s (pid ${process.pid})` }] };
    },
  );
  server.registerTool('fail', { description: 'Always fails.', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'the register is closed today' }], isError: true }));
  return server;
}
