// bash: a command on the stack's computer (the VM), its output streamed to the chat while it
// runs. Without a computer it answers so, honestly; it never pretends to be a shell.
import { z } from 'zod';
import type { ExecRequest, VmExecResult } from '../../vm/protocol.ts';
import { defineTool, MAX_TOOL_OUTPUT_CHARS } from './define-tool.ts';
import description from './bash.md?raw';

export const DEFAULT_TIMEOUT_S = 120;
/** Room under the wrapper's cap for the lines around the output. */
const KEEP_CHARS = MAX_TOOL_OUTPUT_CHARS - 2_000;

export const bashSchema = z.object({
  command: z.string().min(1).max(100_000).optional().describe('The bash command line, run with `bash -c`.'),
  python: z.string().min(1).max(1_000_000).optional().describe('Python code for the warm interpreter, instead of a command.'),
  cwd: z.string().max(4096).optional().describe('Working directory; default /workspace.'),
  timeout: z.number().int().min(1).max(1800).optional().describe(`Seconds before the command is killed; default ${DEFAULT_TIMEOUT_S}.`),
});

export type BashInput = z.infer<typeof bashSchema>;

export interface BashOperations {
  /** Throws with a message for the model when there is no computer or it cannot start. */
  exec(request: ExecRequest, options: { signal: AbortSignal; onOutput: (stream: 'stdout' | 'stderr', text: string) => void }): Promise<VmExecResult>;
  /** Streams a slice of output to the chat. */
  output(toolUseId: string, stream: 'stdout' | 'stderr', text: string): void;
  /** Saves the whole output of a long run; returns its path in user space. */
  saveOutput(toolUseId: string, text: string): Promise<string>;
}

export function createBashTool(ops: BashOperations) {
  return defineTool({
    name: 'bash',
    description,
    schema: bashSchema,
    title: (input) => (input.python ? 'Running Python' : `Running ${oneLine(input.command ?? '')}`),
    async run(input, context) {
      if (!input.command === !input.python) throw new Error('give exactly one of `command` or `python`');
      const request: ExecRequest = {
        ...(input.command ? { command: input.command } : { python: input.python! }),
        cwd: input.cwd ?? '/workspace',
        timeout: input.timeout ?? DEFAULT_TIMEOUT_S,
      };
      const result = await ops.exec(request, {
        signal: context.signal,
        onOutput: (stream, text) => ops.output(context.tool_use_id, stream, text),
      });
      return { content: await describe(result, (text) => ops.saveOutput(context.tool_use_id, text)), is_error: result.code !== 0 };
    },
  });
}

async function describe(result: VmExecResult, save: (text: string) => Promise<string>): Promise<string> {
  const stdout = result.stdout ?? '';
  const stderr = result.stderr ?? '';
  const ending = result.timedOut
    ? `Killed after its timeout (${(result.durationMs / 1000).toFixed(1)} s).`
    : result.cancelled
      ? 'Stopped by the user.'
      : result.signal
        ? `Killed by ${result.signal}.`
        : `Exit code ${result.code}.`;
  const parts: string[] = [];
  const whole = [stdout && `stdout:\n${stdout}`, stderr && `stderr:\n${stderr}`].filter(Boolean).join('\n');
  if (whole.length > KEEP_CHARS) {
    let saved = '';
    try {
      saved = ` The whole output (${whole.length} characters) is in ${await save(whole)}.`;
    } catch (error) {
      saved = ` (The whole output could not be saved: ${error instanceof Error ? error.message : String(error)}.)`;
    }
    const head = Math.floor(KEEP_CHARS * 0.4);
    const tail = KEEP_CHARS - head;
    parts.push(`${whole.slice(0, head)}\n[... ${whole.length - KEEP_CHARS} characters cut ...]\n${whole.slice(-tail)}`, `Output cut.${saved}`);
  } else {
    parts.push(whole || '(no output)');
  }
  parts.push(ending);
  if (result.warning) parts.push(`Warning: ${result.warning}.`);
  if (result.network?.length) parts.push(`Network: ${result.network.join('; ')}.`);
  return parts.join('\n');
}

function oneLine(command: string): string {
  const line = command.replace(/\s+/g, ' ').trim();
  return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}
