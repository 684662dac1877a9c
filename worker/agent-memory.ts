// The agent's side of memory: the memory section of the system prompt, the per-turn hooks that
// write observations, the batch processor's model calls, and search. The agent has no tool that
// writes memory; the processor does that from observations.
import type { FlushOutcome, MemoryHooks, StackMemory } from '../memory/index.ts';
import type { StreamFn } from './agent/types.ts';

export interface AgentMemory {
  /** The memory files and pending actions, formatted for the system prompt. Never throws. */
  prompt(): Promise<string>;
  hooks: MemoryHooks;
  search: StackMemory['search'];
  /** Processes every waiting turn now (after any batch already running). Never throws. */
  learnNow(): Promise<FlushOutcome>;
}

export interface AgentMemoryOptions {
  memory: StackMemory;
  /** The model stream the processor calls (the same connection as the agent). */
  stream: () => Promise<StreamFn>;
  /** The processor's model: a cheap one. */
  processorModel: () => string;
  onError?: (message: string) => void;
}

export async function startAgentMemory(options: AgentMemoryOptions): Promise<AgentMemory> {
  const { memory } = options;
  const processor = memory.createProcessor({
    model: options.processorModel(),
    async complete(request) {
      const stream = await options.stream();
      let text = '';
      const controller = new AbortController();
      for await (const event of stream(
        {
          model: options.processorModel(),
          system: { stable: request.system, dynamic: '' },
          messages: [{ role: 'user', content: request.prompt }],
          tools: [],
          max_tokens: request.maxTokens ?? 4096,
        },
        controller.signal,
      )) {
        if (event.type === 'message') text = event.message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
      }
      return text;
    },
  });
  const { hooks } = await memory.startSession({
    processor,
    onError: (error) => options.onError?.(`Memory: ${error.message}`),
  });
  return {
    hooks,
    search: memory.search,
    async learnNow() {
      await hooks.idle();
      return processor.flushAll();
    },
    async prompt() {
      const loaded = await memory.loadPrompt();
      return loaded.text;
    },
  };
}
