// An MCP stdio transport whose process runs in the stack's computer: the guest agent starts the
// server and relays its stdin and stdout over the exec channel. Messages are newline-delimited
// JSON-RPC, read and written with the SDK's own (de)serialisers; stderr is kept (its last lines)
// to say why a server ended.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ExecRequest, VmExecResult } from '../../vm/protocol.ts';

/** What the transport needs of the computer (worker/computer.ts `service`). */
export interface ServiceRunner {
  service(
    request: ExecRequest,
    options: { signal: AbortSignal; onOutput: (stream: 'stdout' | 'stderr', text: string) => void },
  ): Promise<{ write(bytes: Uint8Array, eof?: boolean): Promise<void>; exited: Promise<{ result: VmExecResult } | { error: string }> }>;
}

/** A line longer than this is not a message a server meant: the server is stopped. */
const MAX_LINE_CHARS = 8 * 1024 * 1024;
const STDERR_KEEP = 2_000;

export class ComputerStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly abort = new AbortController();
  private process: Awaited<ReturnType<ServiceRunner['service']>> | null = null;
  private pending = '';
  private stderrTail = '';
  private closed = false;
  private readonly encoder = new TextEncoder();
  /** How the process ended, once it has: for the error a caller reads. */
  ending: string | null = null;

  constructor(
    private readonly runner: ServiceRunner,
    private readonly request: ExecRequest,
  ) {}

  /** The last of what the server wrote to stderr (its own account of a failure). */
  get stderr(): string {
    return this.stderrTail.trim();
  }

  async start(): Promise<void> {
    if (this.process) throw new Error('ComputerStdioTransport already started');
    this.process = await this.runner.service(this.request, { signal: this.abort.signal, onOutput: (stream, text) => this.output(stream, text) });
    void this.process.exited.then((ended) => {
      this.ending = 'error' in ended ? `the computer lost it (${ended.error})` : describeExit(ended.result);
      this.finish();
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.process || this.closed) throw new Error(`the server is not running${this.ending ? `: ${this.ending}` : ''}`);
    await this.process.write(this.encoder.encode(serializeMessage(message)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.ending ??= 'it was stopped';
    this.abort.abort();
    this.finish();
  }

  private output(stream: 'stdout' | 'stderr', text: string): void {
    if (stream === 'stderr') {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_KEEP);
      return;
    }
    this.pending += text;
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, newline).replace(/\r$/, '');
      this.pending = this.pending.slice(newline + 1);
      if (!line.trim()) continue;
      try {
        this.onmessage?.(deserializeMessage(line));
      } catch (error) {
        // A server that prints anything but JSON-RPC on stdout (a log line) is told, not trusted.
        this.onerror?.(new Error(`the server wrote something that is not an MCP message on stdout: ${line.slice(0, 200)} (${error instanceof Error ? error.message.slice(0, 200) : String(error)})`));
      }
    }
    if (this.pending.length > MAX_LINE_CHARS) {
      this.pending = '';
      this.onerror?.(new Error('the server wrote a line of more than 8 MB on stdout'));
      void this.close();
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

function describeExit(result: VmExecResult): string {
  if (result.cancelled) return 'it was stopped';
  if (result.timedOut) return 'it was killed at its time limit';
  if (result.signal) return `it was killed (${result.signal})`;
  return `it exited with code ${result.code}`;
}
