// Mistral OCR through the Stackdocs proxy's POST /v1/ocr (the proxy holds the Mistral key): the
// whole document goes up as a base64 data URL and comes back as one markdown text per page.
import { z } from 'zod';

export const MISTRAL_OCR_MODEL = 'mistral-ocr-latest';
/** One call reads the whole document; a long scanned PDF takes Mistral a while. */
export const MISTRAL_OCR_TIMEOUT_MS = 180_000;

/** What Mistral can read here: PDFs as documents, and the images the pipeline OCRs. */
export const MISTRAL_OCR_MIMES: ReadonlySet<string> = new Set(['application/pdf', 'image/png', 'image/jpeg', 'image/webp']);

/** Mistral's answer, the parts read here (pages also carry images and dimensions). */
export const mistralOcrResponseSchema = z.object({
  pages: z.array(z.object({ index: z.number().int().min(0), markdown: z.string() })),
  model: z.string(),
  usage_info: z.object({ pages_processed: z.number().int() }).partial().optional(),
});

/** The proxy's own errors, and Mistral's (`{message}` or `{detail}`), for saying why. */
const proxyErrorSchema = z.object({ type: z.literal('error'), error: z.object({ type: z.string(), message: z.string() }) });
const mistralErrorSchema = z.union([z.object({ message: z.string() }), z.object({ detail: z.unknown() })]);

export interface MistralOcrResult {
  /** One text per page, in page order. */
  pages: string[];
  /** The model that read it, as Mistral names it. */
  model: string;
}

export interface MistralOcrOptions {
  /** The proxy's base URL (the model endpoint in Settings). */
  endpoint: string;
  fetch: typeof fetch;
  timeoutMs?: number;
  isOnline?: () => boolean;
}

/** Why Mistral OCR did not read a document, in words for the user (a short clause). */
export class MistralOcrError extends Error {}

/** Reads a PDF or an image with Mistral OCR. Rejects with MistralOcrError, never anything else. */
export async function readWithMistral(bytes: Uint8Array, mime: string, options: MistralOcrOptions): Promise<MistralOcrResult> {
  if (!MISTRAL_OCR_MIMES.has(mime)) throw new MistralOcrError(`Mistral OCR does not read ${mime} here`);
  const base = options.endpoint.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? MISTRAL_OCR_TIMEOUT_MS;
  const dataUrl = `data:${mime};base64,${toBase64(bytes)}`;
  const source = mime === 'application/pdf' ? { type: 'document_url', document_url: dataUrl } : { type: 'image_url', image_url: dataUrl };

  let response: Response;
  try {
    response = await options.fetch(`${base}/v1/ocr`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MISTRAL_OCR_MODEL, document: source, include_image_base64: false }),
      credentials: 'omit',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') throw new MistralOcrError(`Mistral OCR did not answer within ${timeoutMs / 1000} s`);
    const online = options.isOnline ?? (() => globalThis.navigator?.onLine !== false);
    if (!online()) throw new MistralOcrError('this browser is offline');
    throw new MistralOcrError(`the Stackdocs proxy at ${base} could not be reached`);
  }

  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (!response.ok) throw new MistralOcrError(refusal(response.status, body));
  const parsed = mistralOcrResponseSchema.safeParse(body);
  if (!parsed.success) throw new MistralOcrError(`${base}/v1/ocr answered with something other than Mistral OCR pages`);
  if (parsed.data.pages.length === 0) throw new MistralOcrError('Mistral OCR returned no pages');
  const pages = [...parsed.data.pages].sort((a, b) => a.index - b.index).map((page) => pageText(page.markdown));
  return { pages, model: parsed.data.model };
}

function refusal(status: number, body: unknown): string {
  const proxy = proxyErrorSchema.safeParse(body);
  if (proxy.success) {
    // The proxy's own message for this one is long and about deployment; the clause says it all.
    if (proxy.data.error.type === 'proxy_not_configured') return 'the proxy has no Mistral API key (MISTRAL_API_KEY)';
    return `the proxy answered ${status}: ${clip(proxy.data.error.message)}`;
  }
  const mistral = mistralErrorSchema.safeParse(body);
  if (mistral.success) {
    const said = 'message' in mistral.data ? mistral.data.message : typeof mistral.data.detail === 'string' ? mistral.data.detail : JSON.stringify(mistral.data.detail);
    return `Mistral OCR answered ${status}: ${clip(said)}`;
  }
  return `Mistral OCR answered ${status}`;
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** The page's markdown, minus references to the images left out of the answer. */
function pageText(markdown: string): string {
  return markdown
    .replace(/^[ \t]*!\[[^\]]*\]\([^)]*\)[ \t]*$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Base64 in slices, so a 25 MB file never becomes one giant argument list. */
export function toBase64(bytes: Uint8Array): string {
  const SLICE = 0x8000;
  let binary = '';
  for (let at = 0; at < bytes.length; at += SLICE) {
    binary += String.fromCharCode(...bytes.subarray(at, at + SLICE));
  }
  return btoa(binary);
}
