// An MCP server for the tests, written with the official SDK like any user's would be, over stdio:
// the computer runs it with its own node. Bundled into one file by tests/mcp/bundle.ts so the
// computer needs no npm install.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { newServer } from './register.ts';

await newServer().connect(new StdioServerTransport());
process.stderr.write(`test register ready (pid ${process.pid})\n`);
