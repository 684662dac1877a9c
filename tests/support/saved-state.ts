// The computer's saved state as its stack's folder holds it: the generation, when machine.json
// says the state matches the disk, and state.bin's size. Null before the first save of the stack's
// own, while a save lands (a file replaced or half written as it is read), or when the disk moved on.
import type { Page } from 'playwright-core';

export function savedState(page: Page, stack = 'default'): Promise<{ generation: string; size: number } | null> {
  return page.evaluate(async (stack) => {
    try {
      let dir = await navigator.storage.getDirectory();
      for (const name of ['stacks', stack, '.os', 'vm']) dir = await dir.getDirectoryHandle(name);
      const meta = JSON.parse(await (await (await dir.getFileHandle('machine.json')).getFile()).text()) as { state: string | null; disk: string | null };
      const size = (await (await dir.getFileHandle('state.bin')).getFile()).size;
      return meta.state !== null && meta.state === meta.disk && !meta.state.startsWith('pristine-') ? { generation: meta.state, size } : null;
    } catch (error) {
      if (error instanceof SyntaxError || (error instanceof DOMException && ['NotFoundError', 'NotReadableError'].includes(error.name))) return null;
      throw error;
    }
  }, stack);
}
