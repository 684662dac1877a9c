import { describe, expect, it } from 'vitest';
import { describeTarget, parseMcpFile, qualifiedName } from './config.ts';

describe('.os/config/mcp.json', () => {
  it('takes the shape users know: stdio servers by command, remote ones by url', () => {
    const file = parseMcpFile(
      JSON.stringify({
        mcpServers: {
          files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/workspace'], env: { DEBUG: '1' } },
          crm: { type: 'http', url: 'https://crm.example.com/mcp', headers: { Authorization: 'Bearer x' }, timeout: 30 },
          old: { command: 'python3', args: ['server.py'], disabled: true },
        },
      }),
    );
    expect(Object.keys(file.mcpServers)).toEqual(['files', 'crm', 'old']);
    expect(describeTarget(file.mcpServers.files!)).toBe('npx -y @modelcontextprotocol/server-filesystem /workspace');
    expect(describeTarget(file.mcpServers.crm!)).toBe('https://crm.example.com/mcp');
    expect(parseMcpFile('')).toEqual({ mcpServers: {} });
  });

  it.each([
    ['{', /not valid JSON/],
    ['{"servers": {}}', /the file: unknown key "servers"/],
    ['{"mcpServers": {"a b": {"command": "x"}}}', /mcpServers\.a b: a server's name is 1-24 letters/],
    ['{"mcpServers": {"a": {}}}', /mcpServers\.a: a server needs a "command" \(run in the computer\) or a "url" \(remote\)/],
    ['{"mcpServers": {"a": {"command": "x", "url": "https://x.example"}}}', /not both/],
    ['{"mcpServers": {"a": {"url": "ftp://x.example"}}}', /mcpServers\.a\.url: the "url" must be an http\(s\) address/],
    ['{"mcpServers": {"a": {"command": ""}}}', /mcpServers\.a\.command: a server needs a "command"/],
    ['{"mcpServers": {"a": {"command": "x", "timeout": 5000}}}', /at most 1800 seconds/],
    ['{"mcpServers": {"a": {"command": "x", "colour": "red"}}}', /mcpServers\.a: unknown key "colour"/],
    ['{"mcpServers": {"a": 3}}', /a server is an object/],
  ])('%s is refused, saying where and why', (text, message) => {
    expect(() => parseMcpFile(text)).toThrow(message);
  });

  it('a tool name the model API cannot take is left out', () => {
    expect(qualifiedName('crm', 'find_customer')).toBe('mcp__crm__find_customer');
    expect(qualifiedName('crm', 'find customer')).toBeNull();
    expect(qualifiedName('crm', 'x'.repeat(60))).toBeNull();
  });
});
