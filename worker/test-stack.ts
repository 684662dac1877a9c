// Test support: a stack's dependencies for Node tests (in-memory storage and files, a settings
// default pointing at a fake proxy, numbered ids, pdfjs in-process, a canned OCR), overridable.
import type { StackMemory } from '../memory/index.ts';
import type { ExecRequest, VmExecResult } from '../vm/protocol.ts';
import type { ModelStreamEvent } from './agent/types.ts';
import { ComputerUnavailableError, type Computer } from './computer.ts';
import { openPdfInNode } from './documents/node-pdf.ts';
import type { StackDeps } from './stack-deps.ts';
import { createMemoryStorage } from '../storage/json-files.ts';
import { createMemoryUserFiles } from './user-files.ts';

export function testStackDeps(memory: StackMemory, overrides: Partial<StackDeps> & Pick<StackDeps, 'createStream' | 'fetch'>): StackDeps {
  let n = 0;
  return {
    storage: createMemoryStorage(),
    memory,
    files: createMemoryUserFiles(),
    defaults: { provider: 'proxy', endpoint: 'http://proxy.test', model: 'test-model', heartbeat_minutes: 0, has_api_key: false, ocr_engine: 'local', computer_network: true },
    newId: (prefix) => `${prefix}_${++n}`,
    openPdf: openPdfInNode,
    ocr: async () => ({ text: 'scanned text of a test image', confidence: 90 }),
    ...overrides,
  };
}

/** A computer that is always ready and answers each command with `exec` (the tests' stand-in for the VM). */
export function testComputer(exec: (request: ExecRequest) => Promise<Partial<VmExecResult>>, service?: Computer['service']): Computer {
  const status: Computer['status'] = { state: 'ready', woke: false, wake_ms: null };
  return {
    status,
    start: async () => status,
    control: async () => status,
    exec: async (request) => ({ code: 0, signal: null, timedOut: false, cancelled: false, durationMs: 1, stdout: '', stderr: '', ...(await exec(request)) }),
    service:
      service ??
      (async () => {
        throw new ComputerUnavailableError('this test computer runs no servers');
      }),
    workspaceChanged() {},
    subscribeTerminal: async () => {},
    terminalInput: async () => {},
    terminalResize: async () => {},
    networkUse: async () => ({ sent: 0, received: 0, online: true }),
    networkChanged: async () => {},
    capture: async () => null,
  };
}

/** The model's whole message in a scripted stream: `tool_use` when it asks for a tool, else `end_turn`. */
export function modelMessage(content: unknown[]): ModelStreamEvent {
  return {
    type: 'message',
    message: {
      id: 'msg', type: 'message', role: 'assistant', model: 'm', stop_sequence: null,
      content, stop_reason: content.some((b) => (b as { type: string }).type === 'tool_use') ? 'tool_use' : 'end_turn',
      usage: { input_tokens: 3, output_tokens: 4 },
    } as never,
  };
}
