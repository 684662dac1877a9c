// The MCP servers' manager against a real server written with the official SDK (tests/mcp),
// run as a process on this machine by a runner that stands in for the computer's exec channel
// (the e2e tests run the same server in the computer itself).
import { spawn, type ChildProcess } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleTestServer } from '../../tests/mcp/bundle.ts';
import type { VmExecResult } from '../../vm/protocol.ts';
import type { StackEventBody } from '../../protocol/events.ts';
import { createMemoryStorage } from '../../storage/json-files.ts';
import type { ServiceRunner } from './computer-transport.ts';
import { loadMcpServers, type McpServersDeps } from './servers.ts';
import { LEFT_OUT } from './config.ts';

let serverPath = '';
beforeAll(async () => {
  serverPath = await bundleTestServer();
}, 60_000);

/** Runs the request's argv on this machine, as the guest agent would in the computer. */
function hostRunner(children: ChildProcess[]): ServiceRunner {
  return {
    async service(request, options) {
      const [program, ...args] = request.argv!;
      const child = spawn(program!, args, { cwd: process.cwd(), env: { ...process.env, ...(request.env as Record<string, string>) }, stdio: 'pipe' });
      children.push(child);
      child.stdout!.setEncoding('utf8').on('data', (text: string) => options.onOutput('stdout', text));
      child.stderr!.setEncoding('utf8').on('data', (text: string) => options.onOutput('stderr', text));
      options.signal.addEventListener('abort', () => child.kill('SIGKILL'), { once: true });
      const started = Date.now();
      const exited = new Promise<{ result: VmExecResult }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ result: { code, signal, timedOut: false, cancelled: options.signal.aborted, durationMs: Date.now() - started } })),
      );
      return {
        write: async (bytes: Uint8Array, eof = false) => {
          if (!child.stdin!.destroyed) child.stdin!.write(bytes);
          if (eof) child.stdin!.end();
        },
        exited,
      };
    },
  };
}

async function setup(config: unknown, overrides: Partial<McpServersDeps> = {}) {
  const children: ChildProcess[] = [];
  const events: StackEventBody[] = [];
  const storage = createMemoryStorage(config === undefined ? {} : { 'mcp.json': JSON.stringify(config) });
  const mcp = await loadMcpServers({
    storage,
    emit: (event) => events.push(event),
    computer: hostRunner(children),
    remote: () => ({ refused: 'no proxy in this test' }),
    firstRetryMs: 200,
    ...overrides,
  });
  return { mcp, children, events, storage };
}

const context = (signal = new AbortController().signal) => ({ signal, tool_use_id: 'tu1' });

describe('MCP servers in the computer (stdio)', () => {
  it("starts a server, lists its tools under mcp__<server>__<tool>, and calls them", async () => {
    const { mcp } = await setup({ mcpServers: { register: { command: 'node', args: [serverPath] } } });
    try {
      const tools = await mcp.tools(30_000);
      expect(tools.map((tool) => tool.spec.name).sort()).toEqual(['mcp__register__fail', 'mcp__register__vat_number', 'mcp__register__wait']);
      const vat = tools.find((tool) => tool.spec.name === 'mcp__register__vat_number')!;
      expect(vat.spec.input_schema).toMatchObject({ type: 'object', properties: { company: { type: 'string' } }, required: ['company'] });
      const result = await vat.execute({ company: 'Acme Ltd' }, context());
      expect(result.is_error).toBe(false);
      expect(result.content).toMatch(/^Acme Ltd: GB\d{9} \(pid \d+\)$/);
      const failed = await tools.find((tool) => tool.spec.name === 'mcp__register__fail')!.execute({}, context());
      expect(failed).toEqual({ content: 'the register is closed today', is_error: true });
      // The server's own input check answers a bad call, as an error for the model.
      const bad = await vat.execute({ company: 42 }, context());
      expect(bad.is_error).toBe(true);
      expect(mcp.info().servers[0]).toMatchObject({ name: 'register', transport: 'stdio', state: 'ready', starts: 1, error: null });
      expect(mcp.info().servers[0]!.tools.map((tool) => tool.qualified)).toContain('mcp__register__vat_number');
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it('a server killed mid-call: the call says so plainly, and the next call works on the restarted server', async () => {
    const { mcp, children } = await setup({ mcpServers: { register: { command: 'node', args: [serverPath] } } });
    try {
      const tools = await mcp.tools(30_000);
      const wait = tools.find((tool) => tool.spec.name === 'mcp__register__wait')!;
      const vat = tools.find((tool) => tool.spec.name === 'mcp__register__vat_number')!;
      const firstPid = /pid (\d+)/.exec((await vat.execute({ company: 'A' }, context())).content)![1];
      const call = wait.execute({ seconds: 30 }, context());
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The server is bash exec'ed into node: the first child is the server itself.
      children[0]!.kill('SIGKILL');
      const result = await call;
      expect(result.is_error).toBe(true);
      expect(result.content).toContain('mcp__register__wait failed: register: it stopped: it was killed (SIGKILL)');
      expect(result.content).toContain('It is being started again');
      expect(mcp.info().servers[0]).toMatchObject({ state: expect.stringMatching(/failed|starting|ready/) });
      const again = await vat.execute({ company: 'A' }, context());
      expect(again.is_error).toBe(false);
      const secondPid = /pid (\d+)/.exec(again.content)![1];
      expect(secondPid).not.toBe(firstPid);
      expect(mcp.info().servers[0]).toMatchObject({ state: 'ready', starts: 2 });
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it('a server that cannot start says why (its own stderr) and is tried again after a pause that grows', async () => {
    const { mcp, events } = await setup({ mcpServers: { broken: { command: 'node', args: ['-e', 'console.error("no licence key"); process.exit(3)'] } } });
    try {
      expect(await mcp.tools(10_000)).toEqual([]);
      const first = mcp.info().servers[0]!;
      expect(first.state).toBe('failed');
      expect(first.error).toContain('broken: it could not start');
      expect(first.error).toContain('it exited with code 3');
      expect(first.error).toContain('no licence key');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const later = mcp.info().servers[0]!;
      // 200 ms, then 400, then 800: three or four starts in 1.5 s, not dozens.
      expect(later.starts).toBeGreaterThanOrEqual(2);
      expect(later.starts).toBeLessThanOrEqual(5);
      expect(events.filter((event) => event.type === 'mcp_changed').length).toBeGreaterThan(2);
    } finally {
      await mcp.close();
    }
  }, 30_000);

  it('a disabled server does not start and offers no tools; a call past its time limit is said to be one', async () => {
    const { mcp } = await setup({ mcpServers: { off: { command: 'node', args: [serverPath], disabled: true }, slow: { command: 'node', args: [serverPath], timeout: 1 } } });
    try {
      const tools = await mcp.tools(30_000);
      expect(tools.every((tool) => tool.spec.name.startsWith('mcp__slow__'))).toBe(true);
      expect(mcp.info().servers.find((server) => server.name === 'off')).toMatchObject({ enabled: false, state: 'off', starts: 0 });
      const result = await tools.find((tool) => tool.spec.name === 'mcp__slow__wait')!.execute({ seconds: 5 }, context());
      expect(result).toMatchObject({ is_error: true });
      expect(result.content).toContain('took longer than 1 s');
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it('saving the file stops servers whose entry changed or went, and keeps the others running', async () => {
    const { mcp, storage } = await setup({ mcpServers: { a: { command: 'node', args: [serverPath] }, b: { command: 'node', args: [serverPath] } } });
    try {
      await mcp.tools(30_000);
      const info = await mcp.save(JSON.stringify({ mcpServers: { a: { command: 'node', args: [serverPath] }, c: { url: 'https://tools.example/mcp' } } }));
      expect(info.servers.map((server) => [server.name, server.state])).toEqual([
        ['a', 'ready'],
        ['c', 'off'],
      ]);
      expect(JSON.parse(storage.files.get('mcp.json')!)).toEqual({ mcpServers: { a: { command: 'node', args: [serverPath] }, c: { url: 'https://tools.example/mcp' } } });
      // A remote server without the proxy says why it cannot be reached.
      await mcp.tools(5_000);
      expect(mcp.info().servers.find((server) => server.name === 'c')!.error).toContain('no proxy in this test');
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it('a server whose key an export left out is not started, and says which value it needs', async () => {
    const runs: unknown[] = [];
    const remote = (url: string) => (runs.push(url), { refused: 'reached' });
    const { mcp } = await setup(
      { mcpServers: { github: { command: 'node', args: [serverPath], env: { GITHUB_TOKEN: LEFT_OUT, DEBUG: '1' } }, crm: { url: 'https://crm.example/mcp', headers: { Authorization: LEFT_OUT } } } },
      { computer: { service: async (request) => (runs.push(request), Promise.reject(new Error('started'))) }, remote },
    );
    expect(await mcp.tools(1_000)).toEqual([]);
    expect(runs).toEqual([]);
    expect(mcp.info().servers.map((server) => [server.state, server.error, server.retry_at])).toEqual([
      ['failed', 'github: it needs a value for env GITHUB_TOKEN, left out when the stack was exported; fill it in here', null],
      ['failed', 'crm: it needs a value for header Authorization, left out when the stack was exported; fill it in here', null],
    ]);
    await mcp.close();
  });

  it('without a computer, a stdio server says so', async () => {
    const { mcp } = await setup({ mcpServers: { register: { command: 'node', args: [serverPath] } } }, { computer: null });
    expect(await mcp.tools(5_000)).toEqual([]);
    expect(mcp.info().servers[0]!.error).toContain('this stack has no computer to run it in');
    await mcp.close();
  });

  it('a stored file that is not valid is shown with what is wrong, and nothing starts', async () => {
    const { mcp } = await setup({ mcpServers: { 'bad name!': { command: 'x' } } });
    expect(mcp.info()).toMatchObject({ servers: [], error: expect.stringContaining("a server's name is 1-24 letters") });
    expect(await mcp.tools(100)).toEqual([]);
  });
});
