import { describe, expect, it } from 'vitest';
import { describeTarget, LEFT_OUT, mcpSecrets, missingValues, parseMcpFile, qualifiedName, UNREADABLE_FILE_SECRET, withoutSecrets } from './config.ts';

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

  describe('secrets: header and env values', () => {
    const file = JSON.stringify({
      mcpServers: {
        github: { command: 'npx', args: ['-y', 'server-github'], env: { GITHUB_TOKEN: 'ghp_SECRET', EMPTY: '' } },
        crm: { url: 'https://crm.example.com/mcp', headers: { Authorization: 'Bearer crm-SECRET', 'X-Team': 'sales' } },
        plain: { command: 'python3', args: ['server.py'] },
      },
    });

    it('are each named, server by server', () => {
      expect(mcpSecrets(file).map((secret) => secret.label)).toEqual(["MCP server 'github': env GITHUB_TOKEN", "MCP server 'crm': header Authorization", "MCP server 'crm': header X-Team"]);
      expect(mcpSecrets('')).toEqual([]);
    });

    it('are left out unless kept, each in its place marked as one the user must fill in', () => {
      const keep = new Set([mcpSecrets(file).find((secret) => secret.label.endsWith('X-Team'))!.id]);
      const out = withoutSecrets(file, keep);
      expect(out).not.toContain('SECRET');
      const parsed = parseMcpFile(out);
      expect(parsed.mcpServers.github).toEqual({ command: 'npx', args: ['-y', 'server-github'], env: { GITHUB_TOKEN: LEFT_OUT, EMPTY: '' } });
      expect(parsed.mcpServers.crm).toEqual({ url: 'https://crm.example.com/mcp', headers: { Authorization: LEFT_OUT, 'X-Team': 'sales' } });
      expect(missingValues(parsed.mcpServers.github!)).toEqual(['env GITHUB_TOKEN']);
      expect(missingValues(parsed.mcpServers.crm!)).toEqual(['header Authorization']);
      expect(missingValues(parsed.mcpServers.plain!)).toEqual([]);
      // Nothing left out: the file as it is, to the byte.
      expect(withoutSecrets(file, new Set(mcpSecrets(file).map((secret) => secret.id)))).toBe(file);
      expect(mcpSecrets(out).map((secret) => secret.label)).toEqual(["MCP server 'crm': header X-Team"]);
    });

    it('a key in a server\'s address is one too: its parameters, its user name and password', () => {
      const text = JSON.stringify({ mcpServers: { zap: { url: 'https://mcp.example.com/s?api_key=zk-SECRET&v=2' }, old: { url: 'https://bob:pw-SECRET@old.example.com/mcp' }, open: { url: 'https://open.example.com/mcp?empty=' } } });
      const secrets = mcpSecrets(text);
      expect(secrets.map((secret) => secret.label)).toEqual([`MCP server 'zap': "api_key" in its address`, `MCP server 'zap': "v" in its address`, "MCP server 'old': the user name and password in its address"]);
      const out = withoutSecrets(text, new Set([secrets[1]!.id]));
      expect(out).not.toContain('SECRET');
      const servers = parseMcpFile(out).mcpServers;
      expect(new URL((servers.zap as { url: string }).url).searchParams.get('v')).toBe('2');
      expect(missingValues(servers.zap!)).toEqual(['"api_key" in its address']);
      expect(missingValues(servers.old!)).toEqual(['the user name and password in its address']);
      expect(new URL((servers.old as { url: string }).url).host).toBe('old.example.com');
      expect(missingValues(servers.open!)).toEqual([]);
      expect(mcpSecrets(out).map((secret) => secret.label)).toEqual([`MCP server 'zap': "v" in its address`]);
    });

    it('a file the servers refuse still has its values found; one that is not a file of servers is one secret', () => {
      const odd = JSON.stringify({ mcpServers: { 'bad name!': { command: 'x', env: { KEY: 'k-SECRET' }, colour: 'red' } } });
      expect(mcpSecrets(odd).map((secret) => secret.label)).toEqual(["MCP server 'bad name!': env KEY"]);
      expect(withoutSecrets(odd)).not.toContain('k-SECRET');
      for (const text of ['{"mcpServers": {"a": {"command": "x", "env": {"K": "SECRET"}}', '{"mcpServers": [{"headers": {"K": "SECRET"}}]}', '{"mcpServers": {}, "keys": {"K": "SECRET"}}']) {
        expect(mcpSecrets(text)).toEqual([UNREADABLE_FILE_SECRET]);
        expect(withoutSecrets(text)).toBe(JSON.stringify({ mcpServers: {} }, null, 2));
        expect(withoutSecrets(text, new Set([UNREADABLE_FILE_SECRET.id]))).toBe(text);
      }
    });
  });
});
