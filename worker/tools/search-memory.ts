// search_memory: what was learned in earlier turns and sessions, ranked by relevance.
import { z } from 'zod';
import type { MemorySearchResult } from '../../memory/index.ts';
import { defineTool } from './define-tool.ts';

export const searchMemorySchema = z.object({
  query: z.string().max(500).describe('Words to look for; empty returns the most recent learnings.'),
  limit: z.number().int().min(1).max(50).optional().describe('How many results (default 10).'),
});

export function createSearchMemoryTool(search: (query: string, limit?: number) => Promise<MemorySearchResult[]>) {
  return defineTool({
    name: 'search_memory',
    description:
      'Search what you have learned about the user, their documents and their preferences in earlier turns and sessions (facts, patterns, corrections, preferences). Use it before asking the user something they may have told you already.',
    schema: searchMemorySchema,
    title: (input) => (input.query ? `Searching memory for ${input.query}` : 'Reading recent memories'),
    async run(input) {
      const results = await search(input.query, input.limit);
      if (results.length === 0) return input.query ? `Nothing in memory matches "${input.query}".` : 'Memory is empty so far.';
      return results
        .map((result) => {
          const from = result.sourceLabel ? `; from ${result.sourceLabel}, not the user's words` : '';
          return `- [${result.type}] ${result.content} (${result.date}${from})`;
        })
        .join('\n');
    },
  });
}
