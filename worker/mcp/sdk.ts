// The MCP SDK's classes the servers use, in a module of their own: it is loaded when a server
// first starts, not while the stack opens (with the ajv it brings, it is an eighth of the stack
// worker's code, and most stacks have no MCP server).
export { Client } from '@modelcontextprotocol/sdk/client/index.js';
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
export { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker-provider.js';
export { ComputerStdioTransport } from './computer-transport.ts';
