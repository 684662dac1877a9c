// Where in a user's JSON file a problem is, as they would write it: `hooks.PreToolUse[0].matcher`.

/** A zod issue's path as dotted JSON, or "the file" for the whole of it. */
export function configPath(path: readonly PropertyKey[]): string {
  return path.length ? path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('').replace(/^\./, '') : 'the file';
}
