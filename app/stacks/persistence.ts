// Whether the browser keeps this site's storage (every stack) when the device runs short of
// space, and asking it to: `navigator.storage.persist()`, asked when a stack is made.

/** `kept`: the browser will not clear it by itself; `best_effort`: it may, under storage pressure. */
export type Persistence = 'kept' | 'best_effort' | 'unknown';

export async function persistence(): Promise<Persistence> {
  if (!navigator.storage?.persisted) return 'unknown';
  return (await navigator.storage.persisted().catch(() => false)) ? 'kept' : 'best_effort';
}

/** Asks the browser to keep the stacks (Chromium answers by itself; Firefox asks the user). Never rejects. */
export async function askToKeep(): Promise<Persistence> {
  if (!navigator.storage?.persist) return 'unknown';
  if ((await persistence()) === 'kept') return 'kept';
  return (await navigator.storage.persist().catch(() => false)) ? 'kept' : 'best_effort';
}

export function persistenceWords(state: Persistence): string {
  switch (state) {
    case 'kept':
      return 'Kept: the browser will not clear your stacks to make room.';
    case 'best_effort':
      return 'Not guaranteed: the browser may clear your stacks when this device runs short of storage. Installing Stackdocs as an app (or bookmarking it) makes the browser more likely to keep them.';
    case 'unknown':
      return 'This browser does not say whether it keeps your stacks.';
  }
}
