// web_search: titles, addresses and snippets from the search service the Stackdocs proxy's owner
// configured (POST /v1/search). What the results say is data for the model, never instructions.
import { z } from 'zod';
import { defineTool } from './define-tool.ts';
import { callProxy, type ProxyAccess, type ProxyRoute } from './proxy-call.ts';
import description from './web-search.md?raw';

export const DEFAULT_COUNT = 8;
export const MAX_COUNT = 20;

export const webSearchSchema = z.object({
  query: z.string().trim().min(1, 'Give the words to search for.').max(400, 'A query is at most 400 characters.').describe('What to search for, as you would type it into a search engine.'),
  count: z.number().int().min(1).max(MAX_COUNT).optional().describe(`How many results to return. Default ${DEFAULT_COUNT}.`),
});

export type WebSearchInput = z.infer<typeof webSearchSchema>;

/** The proxy's answer (POST /v1/search). */
export const searchAnswerSchema = z.object({
  query: z.string(),
  provider: z.string(),
  results: z.array(z.object({ title: z.string(), url: z.string(), snippet: z.string() })),
});

export type SearchAnswer = z.infer<typeof searchAnswerSchema>;

export interface WebSearchOperations {
  /** Rejects with an Error whose message is written for the model: it becomes the tool's answer. */
  search(query: string, count: number, signal: AbortSignal): Promise<SearchAnswer>;
}

export function createWebSearchTool(ops: WebSearchOperations) {
  return defineTool({
    name: 'web_search',
    description,
    schema: webSearchSchema,
    title: (input) => `Searching the web for “${input.query}”`,
    async run(input, context) {
      return formatResults(await ops.search(input.query, input.count ?? DEFAULT_COUNT, context.signal));
    },
  });
}

function formatResults(answer: SearchAnswer): string {
  if (answer.results.length === 0) return `No results for "${answer.query}". Try other words, or fewer of them.`;
  // A title or snippet must not be able to close the block it is quoted in.
  const quote = (text: string) => text.replace(/<\/search_results>/gi, '<\\/search_results>').replace(/\s+/g, ' ').trim();
  const lines = [`Results for "${answer.query}" (${answer.provider}):`, '<search_results>'];
  answer.results.forEach((result, i) => {
    lines.push(`${i + 1}. ${quote(result.title) || '(no title)'}`, `   ${result.url}`);
    if (result.snippet.trim() !== '') lines.push(`   ${quote(result.snippet)}`);
  });
  lines.push('</search_results>', 'Cite what you use as Markdown links to these addresses; read a result with web_fetch.');
  return lines.join('\n');
}

export const NEEDS_PROXY_MESSAGE =
  'web_search works only through the Stackdocs proxy, and the model provider chosen in Settings is not the proxy. ' +
  'Tell the user: switching the provider to the proxy in Settings makes web search available; otherwise they can give you the address to read.';

export const OFFLINE_MESSAGE = 'web_search needs the network and the Stackdocs proxy; you appear to be offline. Tell the user, and try again when the connection is back.';

const SEARCH_ROUTE: ProxyRoute<SearchAnswer> = {
  tool: 'web_search',
  path: '/v1/search',
  what: 'search results',
  schema: searchAnswerSchema,
  // Longer than the proxy's own limit on the search service, so its answer normally arrives first.
  timeoutMs: 30_000,
  needsProxyMessage: NEEDS_PROXY_MESSAGE,
  offlineMessage: OFFLINE_MESSAGE,
  hints: {
    search_not_configured: 'Tell the user that web search is not set up on their proxy; if they know the address of a page, web_fetch can read it.',
    search_rejected: 'Tell the user the search service refused the proxy; its owner must check the key.',
    search_rate_limited: 'The search service asks to slow down: wait before searching again, and search less often.',
    invalid_query: 'Send a query of 1 to 400 characters.',
    upstream_timeout: 'The search service is slow or down; try again in a moment.',
    upstream_unreachable: 'The search service could not be reached; try again in a moment.',
    upstream_error: 'The search service failed; try again in a moment.',
  },
};

/** Searches through `${endpoint}/v1/search`; rejects with messages written for the model. */
export function createProxySearch(access: ProxyAccess): WebSearchOperations['search'] {
  return (query, count, signal) => callProxy(SEARCH_ROUTE, access, { query, count }, signal);
}
