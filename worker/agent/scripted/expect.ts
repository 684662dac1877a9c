// Checks a request against a turn's `expect`. Each failed check becomes one message naming the
// check, what was expected and what arrived, so a failing test needs no debugger.
import type { Expect } from './script.ts';

type Obj = Record<string, unknown>;

export interface ReceivedRequest {
  /** Lower-cased names, as Node gives them. */
  headers: Record<string, string>;
  body: Obj;
}

/** Returns one message per failed check; empty when every check holds. Never throws. */
export function checkExpect(expect: Expect, request: ReceivedRequest): string[] {
  const failures: string[] = [];
  const fail = (check: string, message: string) => failures.push(`${check}: ${message}`);
  const { body, headers } = request;
  const lastUser = lastUserMessage(body);

  if (expect.last_user_text !== undefined) {
    const text = lastUser === undefined ? undefined : textOf(lastUser['content']);
    if (text === undefined) {
      fail('last_user_text', `expected ${q(expect.last_user_text)} but the request has no user message`);
    } else if (!text.includes(expect.last_user_text)) {
      fail('last_user_text', `expected the last user message to contain ${q(expect.last_user_text)}, got ${q(text)}`);
    }
  }

  if (expect.tool_result !== undefined) {
    const want = expect.tool_result;
    const content = lastUser?.['content'];
    const results = (Array.isArray(content) ? content : []).filter(
      (b): b is Obj => isObj(b) && b['type'] === 'tool_result',
    );
    const matches = results.some(
      (r) =>
        (want.tool_use_id === undefined || r['tool_use_id'] === want.tool_use_id) &&
        (want.contains === undefined || (textOf(r['content']) ?? '').includes(want.contains)) &&
        (want.is_error === undefined || (r['is_error'] === true) === want.is_error),
    );
    if (!matches) {
      const seen = results.map((r) => ({
        tool_use_id: r['tool_use_id'],
        is_error: r['is_error'] ?? false,
        content: textOf(r['content']),
      }));
      const wanted = `a tool_result matching ${JSON.stringify(want)} in the last user message`;
      fail('tool_result', `expected ${wanted}, got ${clip(JSON.stringify(seen))}`);
    }
  }

  if (expect.system_contains !== undefined) {
    const system = textOf(body['system']) ?? '';
    if (!system.includes(expect.system_contains)) {
      fail('system_contains', `expected the system prompt to contain ${q(expect.system_contains)}, got ${q(system)}`);
    }
  }

  if (expect.model !== undefined && body['model'] !== expect.model) {
    fail('model', `expected ${q(expect.model)}, got ${JSON.stringify(body['model'])}`);
  }

  if (expect.has_tools !== undefined) {
    const tools = Array.isArray(body['tools']) ? body['tools'] : [];
    const names = tools.map((t) => (isObj(t) ? t['name'] : undefined));
    const missing = expect.has_tools.filter((name) => !names.includes(name));
    if (missing.length > 0) {
      fail('has_tools', `missing ${JSON.stringify(missing)}; tools sent: ${JSON.stringify(names)}`);
    }
  }

  for (const [name, want] of Object.entries(expect.headers ?? {})) {
    const got = headers[name.toLowerCase()];
    if (want === null && got !== undefined) fail(`headers.${name}`, `expected the header to be absent, got ${q(got)}`);
    else if (want !== null && got !== want) {
      fail(`headers.${name}`, `expected ${q(want)}, got ${got === undefined ? 'no such header' : q(got)}`);
    }
  }
  return failures;
}

function lastUserMessage(body: Obj): Obj | undefined {
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  return messages.filter((m): m is Obj => isObj(m) && m['role'] === 'user').at(-1);
}

/** The text of string content or of its text blocks; undefined when content is neither. */
function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  return content
    .filter((b): b is Obj => isObj(b) && b['type'] === 'text' && typeof b['text'] === 'string')
    .map((b) => b['text'] as string)
    .join('\n');
}

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function q(text: string): string {
  return clip(JSON.stringify(text));
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
