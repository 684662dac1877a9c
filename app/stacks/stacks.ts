// Which stacks this browser has and which one this tab shows. The stacks themselves (folders in
// OPFS, their names and sizes) are the stacks worker's (stacks-client.ts); this keeps the last
// list it gave, so the header names the stack at once, and the per-stack keys of the page.
const LIST_KEY = 'stackdocs:stacks';
const LAST_KEY = 'stackdocs:last-stack';

export interface StackEntry {
  id: string;
  name: string;
}

/** The last list of stacks seen here ("My stack" alone before any). */
export function listStacks(): StackEntry[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(LIST_KEY) ?? '[]') as StackEntry[];
    const valid = parsed.filter((entry) => typeof entry?.id === 'string' && isStackId(entry.id) && typeof entry.name === 'string');
    return valid.length ? valid : [{ id: 'default', name: 'My stack' }];
  } catch {
    return [{ id: 'default', name: 'My stack' }];
  }
}

/** Whether this browser ever kept a list of stacks: false on the very first visit. */
export function hasStackList(): boolean {
  return localStorage.getItem(LIST_KEY) !== null;
}

/** Keeps the stacks worker's list (ids and names) for the next page load. */
export function keepStackList(stacks: StackEntry[]): void {
  localStorage.setItem(LIST_KEY, JSON.stringify(stacks.map(({ id, name }) => ({ id, name }))));
}

export function isStackId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(id);
}

/** The stack named in the address (?stack=), else the last one used here, else the first one listed. */
export function currentStackId(): string {
  const asked = new URLSearchParams(location.search).get('stack');
  if (asked && isStackId(asked)) return asked;
  const last = localStorage.getItem(LAST_KEY);
  return last && isStackId(last) ? last : (listStacks()[0]?.id ?? 'default');
}

/** This tab shows `entry`: it is listed (with its name) and opens next time. */
export function rememberStack(entry: StackEntry): void {
  const stacks = listStacks();
  keepStackList(stacks.some((known) => known.id === entry.id) ? stacks : [...stacks, entry]);
  localStorage.setItem(LAST_KEY, entry.id);
}

/** The page's own keys for one stack (window layout, the first-run card): copied with it, deleted with it. */
function pageKeys(stackId: string): string[] {
  return [`stackdocs:layout:${stackId}`, `stackdocs:first-run-dismissed:${stackId}`];
}

export function copyPageKeys(from: string, to: string): void {
  pageKeys(from).forEach((key, i) => {
    const value = localStorage.getItem(key);
    if (value !== null) localStorage.setItem(pageKeys(to)[i]!, value);
  });
}

export function forgetStack(stackId: string): void {
  pageKeys(stackId).forEach((key) => localStorage.removeItem(key));
  keepStackList(listStacks().filter((entry) => entry.id !== stackId));
  if (localStorage.getItem(LAST_KEY) === stackId) localStorage.removeItem(LAST_KEY);
}

/** The stack's canvas layout as the page keeps it (JSON), for its `.stack` file; null when none. */
export function layoutOf(stackId: string): string | null {
  return localStorage.getItem(pageKeys(stackId)[0]!);
}

export function setLayout(stackId: string, layout: string): void {
  localStorage.setItem(pageKeys(stackId)[0]!, layout);
}

/** Opens a stack in this tab (a fresh page, so a fresh worker). */
export function openStack(id: string): void {
  const url = new URL(location.href);
  url.searchParams.set('stack', id);
  location.assign(url.toString());
}
