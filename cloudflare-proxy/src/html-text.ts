// Readable text out of an HTML page with the Workers' streaming HTMLRewriter: the title, headings
// as "# ", paragraphs, list items as "- ", table rows as "| a | b", links as "text (url)", and
// none of the script, style, navigation or hidden noise.

const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas', 'nav', 'footer', 'select', 'button', 'dialog']);
const HEAD_CONTENT = new Set(['title', 'meta', 'link', 'script', 'style', 'base', 'noscript', 'template']);
const PARAGRAPH = new Set(['p', 'blockquote', 'table', 'ul', 'ol', 'dl', 'figure', 'section', 'article', 'main', 'header']);
const LINE = new Set(['div', 'li', 'tr', 'dt', 'dd', 'figcaption', 'caption', 'address', 'summary', 'details', 'form', 'fieldset', 'legend', 'br']);

export interface PageText {
  title: string;
  text: string;
  /** The text reached `maxChars` and the rest of the page was not read. */
  cut: boolean;
}

// HTMLRewriter calls back into JavaScript for every element and text node, a few microseconds
// each, so a dense multi-megabyte page costs seconds of CPU. The page is fed in slices and reading
// stops once there is enough text.
const SLICE_BYTES = 64 * 1024;

/** `baseUrl` resolves relative links. Rejects only if HTMLRewriter itself fails. */
export async function htmlToText(html: string, baseUrl: string, maxChars: number): Promise<PageText> {
  const page = new PageReader(baseUrl);
  const rewriter = new HTMLRewriter()
    .on('*', { element: (el) => page.element(el) })
    .onDocument({ text: (chunk) => page.text(chunk) });
  const output = rewriter.transform(new Response(slices(new TextEncoder().encode(html)))).body!.getReader();
  let cut = false;
  for (;;) {
    const { done } = await output.read();
    if (done) break;
    if (page.out.length >= maxChars) {
      cut = true;
      await output.cancel();
      break;
    }
  }
  const text = page.out.toString();
  return { title: decodeEntities(page.title).replace(/\s+/g, ' ').trim(), text: cut ? text.slice(0, maxChars) : text, cut };
}

function slices(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + SLICE_BYTES));
      at += SLICE_BYTES;
    },
  });
}

/** The state of one pass over a page: where we are (head, skipped, pre) and the text so far. */
class PageReader {
  readonly out = new TextOut();
  title = '';
  private titleState: 'none' | 'reading' | 'done' = 'none';
  private skip = 0;
  private inHead = false;
  private pre = 0;
  private pending = '';

  constructor(private readonly baseUrl: string) {}

  element(el: Element): void {
    const tag = el.tagName.toLowerCase();
    if (tag === 'head') {
      if (onEnd(el, () => void (this.inHead = false))) this.inHead = true;
      return;
    }
    // </head> may be left out: the first element that cannot be in a head ends it.
    if (this.inHead && !HEAD_CONTENT.has(tag)) this.inHead = false;
    if (tag === 'title') {
      if (this.titleState === 'none' && this.skip === 0 && onEnd(el, () => void (this.titleState = 'done'))) this.titleState = 'reading';
      return;
    }
    if (this.skip > 0 || this.inHead) return;
    if (SKIP.has(tag) || el.hasAttribute('hidden') || el.getAttribute('aria-hidden') === 'true') {
      if (onEnd(el, () => void this.skip--)) this.skip++;
      return;
    }
    this.open(el, tag);
  }

  text(chunk: Text): void {
    // A text node can arrive in pieces split anywhere, even inside an entity.
    this.pending += chunk.text;
    if (!chunk.lastInTextNode) return;
    const raw = this.pending;
    this.pending = '';
    if (this.titleState === 'reading') this.title += raw;
    else if (this.skip === 0 && !this.inHead) this.write(decodeEntities(raw));
  }

  private write(text: string): void {
    if (this.pre > 0) return this.out.write(text);
    const collapsed = text.replace(/\s+/g, ' ');
    if (collapsed.startsWith(' ')) this.out.space();
    this.out.write(collapsed.trim());
    if (collapsed.length > 1 && collapsed.endsWith(' ')) this.out.space();
  }

  private open(el: Element, tag: string): void {
    const { out } = this;
    const heading = /^h([1-6])$/.exec(tag);
    if (heading) {
      out.lineBreak(2);
      out.marker(`${'#'.repeat(Number(heading[1]))} `);
      onEnd(el, () => out.endItem(2));
    } else if (tag === 'li') {
      out.lineBreak(1);
      out.marker('- ');
      onEnd(el, () => out.endItem(1));
    } else if (tag === 'td' || tag === 'th') {
      out.space();
      out.marker('| ', false);
    } else if (tag === 'hr') {
      out.lineBreak(2);
      out.write('---');
      out.lineBreak(2);
    } else if (tag === 'pre') {
      out.lineBreak(2);
      const ended = onEnd(el, () => {
        this.pre--;
        out.lineBreak(2);
      });
      if (ended) this.pre++;
    } else if (PARAGRAPH.has(tag) || LINE.has(tag)) {
      const lines = PARAGRAPH.has(tag) ? 2 : 1;
      out.lineBreak(lines);
      if (tag !== 'br') onEnd(el, () => out.lineBreak(lines));
    } else if (tag === 'a') {
      const target = linkTarget(el.getAttribute('href'), this.baseUrl);
      const mark = out.mark();
      if (target) onEnd(el, () => out.linkNote(mark, target));
    }
  }
}

/** Registers an end-tag handler; false for elements that have none (void or self-closed). */
function onEnd(el: Element, handler: () => void): boolean {
  try {
    el.onEndTag(handler);
    return true;
  } catch {
    return false;
  }
}

function linkTarget(href: string | null, baseUrl: string): string | null {
  if (href === null || href.trim() === '' || href.trim().startsWith('#')) return null;
  try {
    const url = new URL(decodeEntities(href.trim()), baseUrl);
    return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Text built in parts, with line breaks and spaces decided lazily so none pile up. */
class TextOut {
  private readonly parts: string[] = [];
  private breaks = 0;
  private spaced = false;
  private afterMarker = false;
  // Breaks asked for right after a marker: "- " or "# " stays on the line of the text it
  // introduces (<li><p>One</p></li>), but an empty item still ends its line.
  private deferred = 0;
  private dropIfEmpty = false;
  /** Characters written so far. */
  length = 0;

  lineBreak(count: number): void {
    if (this.afterMarker) this.deferred = Math.max(this.deferred, count);
    else this.breaks = Math.max(this.breaks, count);
  }

  space(): void {
    this.spaced = true;
  }

  write(text: string, isMarker = false): void {
    if (text === '') return;
    if (isMarker) this.dropEmptyMarker();
    const last = this.parts.length - 1;
    if (last >= 0) {
      if (this.breaks > 0) {
        const trimmed = trimSpacesEnd(this.parts[last]!);
        this.length -= this.parts[last]!.length - trimmed.length;
        this.parts[last] = trimmed;
        const have = trailingNewlines(this.parts);
        if (this.breaks > have) this.push('\n'.repeat(this.breaks - have));
      } else if (this.spaced && !/\s$/.test(this.parts[last]!)) {
        this.push(' ');
      }
    }
    this.push(text);
    this.breaks = 0;
    this.spaced = false;
    this.afterMarker = isMarker;
    this.deferred = 0;
  }

  /**
   * A prefix such as "- ", "# " or "| ": the line breaks asked for before its text are dropped,
   * and so is the marker when another follows with no text between (unless it keeps a table
   * column in place).
   */
  marker(text: string, dropIfEmpty = true): void {
    this.write(text, true);
    this.dropIfEmpty = dropIfEmpty;
  }

  /** Ends a list item or heading: its marker goes if nothing followed it. */
  endItem(count: number): void {
    this.dropEmptyMarker();
    this.lineBreak(count);
  }

  private dropEmptyMarker(): void {
    if (!this.afterMarker) return;
    if (this.dropIfEmpty) this.length -= this.parts.pop()!.length;
    this.afterMarker = false;
    this.breaks = Math.max(this.breaks, this.deferred);
    this.deferred = 0;
  }

  private push(text: string): void {
    this.parts.push(text);
    this.length += text.length;
  }

  mark(): number {
    return this.parts.length;
  }

  /** Appends " (url)" to a link, unless it showed no text or its text was the url already. */
  linkNote(mark: number, url: string): void {
    const shown = this.parts.slice(mark).join('').trim();
    if (shown === '' || shown === url || `${shown}/` === url) return;
    this.space();
    this.write(`(${url})`);
  }

  toString(): string {
    this.dropEmptyMarker();
    return this.parts.join('').trim();
  }
}

function trimSpacesEnd(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === ' ') end--;
  return end === text.length ? text : text.slice(0, end);
}

function trailingNewlines(parts: readonly string[]): number {
  let count = 0;
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!;
    let end = part.length;
    while (end > 0 && part[end - 1] === '\n') end--;
    count += part.length - end;
    if (end > 0) break;
  }
  return count;
}

const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', shy: '', copy: '©', reg: '®', trade: '™',
  euro: '€', pound: '£', yen: '¥', cent: '¢', sect: '§', para: '¶', deg: '°', plusmn: '±', times: '×', divide: '÷',
  middot: '·', bull: '•', hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”',
  laquo: '«', raquo: '»', larr: '←', rarr: '→', uarr: '↑', darr: '↓', frac12: '½', frac14: '¼', frac34: '¾',
  auml: 'ä', ouml: 'ö', uuml: 'ü', Auml: 'Ä', Ouml: 'Ö', Uuml: 'Ü', szlig: 'ß', eacute: 'é', egrave: 'è',
  aacute: 'á', agrave: 'à', oacute: 'ó', uacute: 'ú', iacute: 'í', ntilde: 'ñ', ccedil: 'ç', zwj: '\u200d',
  zwnj: '\u200c', thinsp: '\u2009', ensp: '\u2002', emsp: '\u2003',
};

/** Decodes numeric character references and the common named ones; others are left as written. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z][a-z0-9]*);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const hex = code[1] === 'x' || code[1] === 'X';
      const n = hex ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
      return n > 0 && n < 0x110000 && (n < 0xd800 || n > 0xdfff) ? String.fromCodePoint(n) : '\ufffd';
    }
    return NAMED[code] ?? NAMED[code.toLowerCase()] ?? whole;
  });
}
