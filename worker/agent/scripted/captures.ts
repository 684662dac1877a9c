// Values a script cannot know in advance (ids the app generates) taken from the request: a
// string `{{tool_result:REGEX}}` anywhere in a reply's tool_use input becomes the first capture
// group of REGEX matched against the tool_result texts of the last user message.
import type { MessageReply } from './script.ts';

type Obj = Record<string, unknown>;

const PATTERN = /^\{\{tool_result:(.+)\}\}$/s;

/** Returns the reply with captures filled in, or a problem naming what did not match. */
export function fillCaptures(reply: MessageReply, body: Obj): { reply: MessageReply } | { problem: string } {
  const results = toolResultTexts(body);
  let problem: string | null = null;
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const found = PATTERN.exec(value);
      if (!found) return value;
      let regex: RegExp;
      try {
        regex = new RegExp(found[1]!);
      } catch {
        problem = `capture ${value} is not a valid regular expression`;
        return value;
      }
      for (const text of results) {
        const match = regex.exec(text);
        if (match) return match[1] ?? match[0];
      }
      problem = `capture ${value} matched no tool_result in the last user message`;
      return value;
    }
    if (Array.isArray(value)) return value.map(fill);
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
    return value;
  };
  const content = reply.content.map((block) => (block.type === 'tool_use' ? { ...block, input: fill(block.input) as Obj } : block));
  return problem ? { problem } : { reply: { ...reply, content } };
}

function toolResultTexts(body: Obj): string[] {
  const messages = Array.isArray(body['messages']) ? (body['messages'] as Obj[]) : [];
  const last = messages.filter((m) => m?.['role'] === 'user').at(-1);
  const content = Array.isArray(last?.['content']) ? (last!['content'] as Obj[]) : [];
  return content
    .filter((block) => block?.['type'] === 'tool_result')
    .map((block) => (typeof block['content'] === 'string' ? block['content'] : JSON.stringify(block['content'] ?? '')));
}
