// Turns any user text into a safe FTS5 MATCH expression: every word becomes a quoted string, so
// FTS5 operators (AND, OR, NOT, NEAR, *, ^, :, parentheses, quotes) in the text are only words.

/** At most this many distinct words reach FTS5; longer queries are cut (the first words win). */
export const MAX_QUERY_TERMS = 16;
/** A longer word is cut; it would match nothing real anyway. */
export const MAX_TERM_LENGTH = 64;

/**
 * The words of `text` as the unicode61 tokenizer sees them (letters, numbers, private use),
 * normalised (NFKC) and deduplicated case-insensitively; [] when there are none.
 */
export function queryTerms(text: string): string[] {
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const match of text.normalize('NFKC').matchAll(/[\p{L}\p{N}\p{Co}]+/gu)) {
    const term = [...match[0]].slice(0, MAX_TERM_LENGTH).join('');
    const key = term.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    terms.push(term);
    if (terms.length === MAX_QUERY_TERMS) break;
  }
  return terms;
}

/**
 * A MATCH expression joining the quoted terms with AND (all words) or OR (any word), or null
 * when there are no terms. Terms hold no `"` (only word characters), so quoting is total.
 */
export function toFtsQuery(terms: readonly string[], join: 'AND' | 'OR'): string | null {
  if (terms.length === 0) return null;
  return terms.map((term) => `"${term.replace(/"/g, '""')}"`).join(` ${join} `);
}
