// Cutting text to a size with a visible marker, so an oversized turn is kept (shortened), not lost.

/** Field limits of one observation, in UTF-16 code units. */
export const OBSERVATION_LIMITS = {
  userMessage: 32_000,
  agentResponse: 32_000,
  /** Per tool call, as the specification asks. */
  toolSummary: 2_000,
  toolCalls: 50,
} as const;

/**
 * Returns `text` unchanged when it fits, else its start plus a marker saying how much was cut;
 * the result never exceeds `max` (a max too small for the marker cuts without one). Never splits
 * a surrogate pair. `totalLength` is the original length when `text` is already a prefix of it.
 */
export function truncateText(text: string, max: number, totalLength = text.length): string {
  if (text.length <= max) return text;
  const marker = `\n[... truncated: ${Math.max(totalLength, text.length).toLocaleString('en-US')} characters in all]`;
  if (max <= marker.length) return text.slice(0, wholeCharacters(text, max));
  return text.slice(0, wholeCharacters(text, max - marker.length)) + marker;
}

/** `end`, or one less when cutting there would leave half a surrogate pair. */
function wholeCharacters(text: string, end: number): number {
  const code = text.charCodeAt(end - 1);
  return end > 0 && code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

export function isTruncated(text: string): boolean {
  return /\n\[\.\.\. truncated: [\d,]+ characters in all\]$/.test(text);
}
