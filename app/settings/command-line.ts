// How Settings reads a command the user typed for an MCP server.

/** A command line split into words, with '…' and "…" quoting (no shell runs it: the computer starts the program itself). */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote) {
      if (char === quote) quote = null;
      else if (char === '\\' && quote === '"' && i + 1 < line.length) word += line[++i]!;
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      word ??= '';
    } else if (/\s/.test(char)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (char === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i]!;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (quote) throw new Error('a quote is not closed');
  if (word !== null) words.push(word);
  return words;
}
