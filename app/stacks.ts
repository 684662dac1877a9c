// Which stacks this browser has and which one this tab shows. The list is the app's own index
// (ids and names); each stack's data lives in its own OPFS folder, owned by its worker.
const LIST_KEY = 'stackdocs:stacks';
const LAST_KEY = 'stackdocs:last-stack';

export interface StackEntry {
  id: string;
  name: string;
}

export function listStacks(): StackEntry[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(LIST_KEY) ?? '[]') as StackEntry[];
    const valid = parsed.filter((entry) => typeof entry?.id === 'string' && isStackId(entry.id) && typeof entry.name === 'string');
    return valid.some((entry) => entry.id === 'default') ? valid : [{ id: 'default', name: 'My stack' }, ...valid];
  } catch {
    return [{ id: 'default', name: 'My stack' }];
  }
}

export function isStackId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(id);
}

/** The stack named in the address (?stack=), else the last one used here, else the default. */
export function currentStackId(): string {
  const asked = new URLSearchParams(location.search).get('stack');
  if (asked && isStackId(asked)) return asked;
  const last = localStorage.getItem(LAST_KEY);
  return last && isStackId(last) ? last : 'default';
}

export function rememberStack(entry: StackEntry): void {
  const stacks = listStacks().filter((known) => known.id !== entry.id);
  localStorage.setItem(LIST_KEY, JSON.stringify([...stacks, entry]));
  localStorage.setItem(LAST_KEY, entry.id);
}

export function newStack(name: string): StackEntry {
  const entry = { id: `s-${crypto.randomUUID().slice(0, 8)}`, name: name.trim().slice(0, 60) || 'New stack' };
  rememberStack(entry);
  return entry;
}

/** Opens a stack in this tab (a fresh page, so a fresh worker). */
export function openStack(id: string): void {
  const url = new URL(location.href);
  url.searchParams.set('stack', id);
  location.assign(url.toString());
}
