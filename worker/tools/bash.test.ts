import { describe, expect, it } from 'vitest';
import type { ExecRequest, VmExecResult } from '../../vm/protocol.ts';
import { createBashTool } from './bash.ts';
import { MAX_TOOL_OUTPUT_CHARS } from './define-tool.ts';

const context = () => ({ signal: new AbortController().signal, tool_use_id: 'tu1' });
const done = (over: Partial<VmExecResult> = {}): VmExecResult => ({ code: 0, signal: null, timedOut: false, cancelled: false, durationMs: 12, stdout: '', stderr: '', ...over });

function setup(answer: (request: ExecRequest) => VmExecResult | Promise<VmExecResult>) {
  const requests: ExecRequest[] = [];
  const streamed: string[] = [];
  const saved: { id: string; text: string }[] = [];
  const tool = createBashTool({
    exec: async (request, options) => {
      requests.push(request);
      options.onOutput('stdout', 'live ');
      return answer(request);
    },
    output: (id, stream, text) => streamed.push(`${id}:${stream}:${text}`),
    saveOutput: async (id, text) => {
      saved.push({ id, text });
      return `artifacts/tool-output/${id}.txt`;
    },
  });
  return { tool, requests, streamed, saved };
}

describe('bash', () => {
  it('shows the model this schema', () => {
    const { tool } = setup(() => done());
    expect(tool.spec).toMatchSnapshot();
  });

  it('runs the command in /workspace with the default timeout and streams its output', async () => {
    const { tool, requests, streamed } = setup(() => done({ stdout: '2.2.3\n' }));
    const result = await tool.execute({ command: "python3 -c 'import pandas; print(pandas.__version__)'" }, context());
    expect(requests).toEqual([{ command: "python3 -c 'import pandas; print(pandas.__version__)'", cwd: '/workspace', timeout: 120 }]);
    expect(result).toEqual({ content: 'stdout:\n2.2.3\n\nExit code 0.', is_error: false });
    expect(streamed).toEqual(['tu1:stdout:live ']);
  });

  it('reports a failing exit, a timeout, a stop and a save warning as such', async () => {
    expect((await setup(() => done({ code: 2, stderr: 'ls: cannot access' })).tool.execute({ command: 'ls x' }, context())).is_error).toBe(true);
    expect((await setup(() => done({ code: null, signal: 'SIGKILL', timedOut: true, durationMs: 5000 })).tool.execute({ command: 'sleep 99', timeout: 5 }, context())).content).toContain('Killed after its timeout (5.0 s)');
    expect((await setup(() => done({ code: null, signal: 'SIGKILL', cancelled: true })).tool.execute({ command: 'sleep 99' }, context())).content).toContain('Stopped by the user.');
    expect((await setup(() => done({ warning: 'the storage is full' })).tool.execute({ command: 'true' }, context())).content).toContain('Warning: the storage is full.');
  });

  it('cuts long output and saves the whole of it to a file', async () => {
    const long = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join('\n');
    const { tool, saved } = setup(() => done({ stdout: long }));
    const result = await tool.execute({ command: 'seq' }, context());
    expect(result.content.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS);
    expect(result.content).toContain('line 0\n');
    expect(result.content).toContain('line 19999');
    expect(result.content).toContain('The whole output');
    expect(result.content).toContain('artifacts/tool-output/tu1.txt');
    expect(saved[0]!.text).toContain(long);
  });

  it('runs python in the warm interpreter, and wants exactly one of command or python', async () => {
    const { tool, requests } = setup(() => done({ stdout: '42\n' }));
    await tool.execute({ python: 'print(6*7)' }, context());
    expect(requests[0]).toMatchObject({ python: 'print(6*7)' });
    expect((await tool.execute({}, context())).content).toContain('exactly one of `command` or `python`');
    expect((await tool.execute({ command: 'x', python: 'y' }, context())).is_error).toBe(true);
  });

  it('answers honestly when there is no computer', async () => {
    const tool = createBashTool({
      exec: async () => {
        throw new Error('This stack has no computer: bash cannot run here.');
      },
      output: () => {},
      saveOutput: async () => '',
    });
    expect(await tool.execute({ command: 'ls' }, context())).toEqual({ content: 'bash failed: This stack has no computer: bash cannot run here.', is_error: true });
  });
});
