// The conversation the model sees, kept across reloads in the stack's system space. A mission
// cut off by a reload is closed with a note, so the model knows it did not finish.
import type { MessageParam } from './agent/types.ts';
import { hostsNamedIn } from './permissions/rules.ts';
import type { StackStorage } from '../storage/json-files.ts';

const FILE = 'conversation.json';

interface ConversationFile {
  version: 1;
  messages: MessageParam[];
  /** Size of the last prompt, so compaction can be decided before the next call. */
  prompt_tokens: number;
  /** True from a mission's start until its end is saved: still true after a reload = interrupted. */
  open: boolean;
}

export interface Conversation {
  readonly messages: MessageParam[];
  readonly promptTokens: number;
  /** Saves the messages a mission starts from, marked open. */
  begin(messages: MessageParam[]): Promise<void>;
  /** Saves where a mission ended. */
  end(messages: MessageParam[], promptTokens: number): Promise<void>;
}

export async function loadConversation(storage: StackStorage): Promise<Conversation & { interrupted: boolean }> {
  const stored = await storage.readJson<ConversationFile>(FILE);
  let messages: MessageParam[] = stored?.version === 1 && Array.isArray(stored.messages) ? stored.messages : [];
  let promptTokens = stored?.prompt_tokens ?? 0;
  const interrupted = stored?.open === true;
  if (interrupted) {
    // The reload cut the mission off; whatever its last turn held is gone, so say so plainly.
    messages = [...messages, { role: 'assistant', content: '(This request was interrupted: the page was closed or reloaded before I finished.)' }];
    await storage.writeJson(FILE, { version: 1, messages, prompt_tokens: promptTokens, open: false } satisfies ConversationFile);
  }
  return {
    interrupted,
    get messages() {
      return messages;
    },
    get promptTokens() {
      return promptTokens;
    },
    async begin(next) {
      messages = next;
      await storage.writeJson(FILE, { version: 1, messages, prompt_tokens: promptTokens, open: true } satisfies ConversationFile);
    },
    async end(next, tokens) {
      messages = next;
      promptTokens = tokens;
      await storage.writeJson(FILE, { version: 1, messages, prompt_tokens: promptTokens, open: false } satisfies ConversationFile);
    },
  };
}

/** What the user did on the canvas since the last turn goes before their message, as context. */
export function withInteractions(notes: string[], text: string): string {
  if (notes.length === 0) return text;
  return `<canvas_interactions>\n${notes.map((note) => `- ${note}`).join('\n')}\n</canvas_interactions>\n\n${text}`;
}

/** The user's new text joins a trailing user turn (e.g. tool results of a stopped mission). */
export function withUserText(history: MessageParam[], text: string): MessageParam[] {
  const last = history.at(-1);
  if (last?.role !== 'user') return [...history, { role: 'user', content: text }];
  const content = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
  return [...history.slice(0, -1), { role: 'user', content: [...content, { type: 'text', text }] }];
}

/**
 * Hosts the user named in their own messages: their typed text and canvas notes, never tool
 * results (what the agent read), a compaction summary (what the model wrote) nor a hook's
 * output (what a program printed), which comes inside `<hook_output>`.
 */
export function userHostsOf(messages: readonly MessageParam[]): Set<string> {
  const hosts = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'user') continue;
    const texts = typeof message.content === 'string' ? [message.content] : message.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
    for (const text of texts) {
      if (text.startsWith('<conversation_summary>')) continue;
      for (const host of hostsNamedIn(text.replace(/<hook_output>[\s\S]*?<\/hook_output>/g, ''))) hosts.add(host);
    }
  }
  return hosts;
}
