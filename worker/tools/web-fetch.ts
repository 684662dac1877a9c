// web_fetch: a public web page as readable text, fetched by the Stackdocs proxy's POST /v1/fetch
// (which refuses private addresses, re-checks every redirect, and caps size and time). What a
// page says is data for the model, never instructions.
import { z } from 'zod';
import { defineTool, MAX_TOOL_OUTPUT_CHARS } from './define-tool.ts';
import { callProxy, type ProxyRoute } from './proxy-call.ts';
import description from './web-fetch.md?raw';

export const DEFAULT_MAX_CHARS = 20_000;
/** Leaves room under the wrapper's output cap for the lines around the page text. */
export const MAX_CHARS_LIMIT = MAX_TOOL_OUTPUT_CHARS - 2_000;

export const webFetchSchema = z.object({
  url: z
    .url({ protocol: /^https?$/, error: 'Give a full http(s) address, e.g. "https://example.com/page".' })
    .describe('The page to read: a full http or https address.'),
  max_chars: z
    .number()
    .int()
    .min(500)
    .max(MAX_CHARS_LIMIT)
    .optional()
    .describe(`How many characters of the page text to return. Default ${DEFAULT_MAX_CHARS}.`),
});

export type WebFetchInput = z.infer<typeof webFetchSchema>;

/** The proxy's answer for a page (POST /v1/fetch). */
export const fetchedPageSchema = z.object({
  url: z.string(),
  final_url: z.string(),
  status: z.number().int(),
  content_type: z.string(),
  title: z.string(),
  text: z.string(),
  /** The page was larger than the proxy reads (5 MB, or 200,000 characters of text from HTML). */
  truncated: z.boolean(),
});

export type FetchedPage = z.infer<typeof fetchedPageSchema>;

export interface WebFetchOperations {
  /** Rejects with an Error whose message is written for the model: it becomes the tool's answer. */
  fetchPage(url: string, signal: AbortSignal): Promise<FetchedPage>;
}

export function createWebFetchTool(ops: WebFetchOperations) {
  return defineTool({
    name: 'web_fetch',
    description,
    schema: webFetchSchema,
    title: (input) => `Reading ${input.url}`,
    async run(input, context) {
      const page = await ops.fetchPage(input.url, context.signal);
      return formatPage(page, input.max_chars ?? DEFAULT_MAX_CHARS);
    },
  });
}

function formatPage(page: FetchedPage, maxChars: number): string {
  const lines = [`URL: ${page.final_url}`];
  if (page.final_url !== page.url) lines.push(`Redirected from: ${page.url}`);
  if (page.title !== '') lines.push(`Title: ${page.title}`);
  lines.push(`Content type: ${page.content_type}`);
  if (page.status < 200 || page.status > 299) {
    lines.push(`Status: ${page.status}. The site answered with an error; the text below is its error page.`);
  }
  const shown = page.text.slice(0, maxChars);
  // The page must not be able to close the block it is quoted in.
  const body = shown.trim() === '' ? '(no readable text on this page)' : shown.replace(/<\/page_text>/gi, '<\\/page_text>');
  lines.push('<page_text>', body, '</page_text>');
  if (page.text.length > maxChars) {
    const more = maxChars < MAX_CHARS_LIMIT ? ` Call again with a larger max_chars (at most ${MAX_CHARS_LIMIT}) to see more.` : ' This is the most web_fetch returns at once.';
    lines.push(`[Text cut: showing the first ${maxChars} of ${page.text.length} characters.${more}]`);
  }
  if (page.truncated) lines.push('[Only the beginning of this page was fetched: it is larger than the proxy reads.]');
  return lines.join('\n');
}

export const NEEDS_PROXY_MESSAGE =
  'web_fetch works only through the Stackdocs proxy, and the model provider chosen in Settings is not the proxy. ' +
  'Tell the user: switching the provider to the proxy in Settings makes web pages readable; otherwise they can paste the text or upload the file.';

export const OFFLINE_MESSAGE = 'web_fetch needs the network and the Stackdocs proxy; you appear to be offline. Tell the user, and try again when the connection is back.';

/** Longer than the proxy's own 20 s limit, so the proxy's answer normally arrives first. */
const PROXY_TIMEOUT_MS = 45_000;

const FETCH_ROUTE: ProxyRoute<FetchedPage> = {
  tool: 'web_fetch',
  path: '/v1/fetch',
  what: 'a page',
  schema: fetchedPageSchema,
  timeoutMs: PROXY_TIMEOUT_MS,
  needsProxyMessage: NEEDS_PROXY_MESSAGE,
  offlineMessage: OFFLINE_MESSAGE,
  // What the model can do about each refusal, after the proxy's own message.
  hints: {
    blocked_address: 'Only public web pages can be fetched; private, local and reserved addresses never are.',
    invalid_url: 'Only public http(s) addresses can be fetched.',
    too_many_redirects: 'The site redirects in a loop or too often; if you know the final address, fetch that.',
    upstream_timeout: 'The site is slow or down; try again later or use another source.',
    upstream_unreachable: 'Check the address; the site may be down or may not exist.',
  },
};

/**
 * Fetches pages through `${endpoint}/v1/fetch`. `endpoint` is the proxy's base URL, or a function
 * read on every call that returns null when the proxy is not the chosen provider (settings change
 * while the stack runs). `isOnline` tells "offline" apart from "proxy down" (navigator.onLine by
 * default). The returned function rejects with messages written for the model.
 */
export function createProxyFetchPage(
  endpoint: string | (() => string | null),
  fetchFn: typeof fetch,
  isOnline?: () => boolean,
): WebFetchOperations['fetchPage'] {
  return (url, signal) => callProxy(FETCH_ROUTE, { endpoint, fetch: fetchFn, ...(isOnline ? { isOnline } : {}) }, { url }, signal);
}
