// The import dialog asks before a stack file over the import ceiling is written: the refusal
// names both sizes, and "Import anyway" imports it once more with the user's yes.
import { h, render } from 'preact';
import { describe, expect, it } from 'vitest';
import { StackFileDialog } from './StackFileDialog.tsx';
import { StackCallError } from '../connection/stack-client.ts';
import type { StackActions } from './stack-actions.ts';
import type { StacksClient } from './stacks-client.ts';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TOO_LARGE = 'This stack unpacks to 5.0 GB, more than a stack file may take without asking (4.0 GB: half the room this browser has left for Stackdocs, at most 4.0 GB). Nothing was written. Import it anyway only if you expected a stack this large.';

describe('StackFileDialog', () => {
  it('offers "Import anyway" for a file over the ceiling, and only then imports it with allowLarge', async () => {
    const calls: (boolean | undefined)[] = [];
    const actions = {
      importFile: async (_file: Blob, _job: string, _progress: unknown, { allowLarge }: { allowLarge?: boolean } = {}) => {
        calls.push(allowLarge);
        if (!allowLarge) throw new StackCallError({ code: 'too_large', message: TOO_LARGE });
        return { id: 's-big', name: 'Big', bytes: 5e9 };
      },
    } as unknown as StackActions;
    const root = document.createElement('div');
    document.body.append(root);
    let closed = false;
    render(h(StackFileDialog, { task: { kind: 'import', file: new File(['x'], 'big.stack') }, actions, stacks: { cancel: async () => {} } as unknown as StacksClient, onClose: () => (closed = true), reopen: () => {} }), root);
    await wait(50);
    expect(root.querySelector('[role=alert]')?.textContent).toBe(TOO_LARGE);
    const buttons = () => [...root.querySelectorAll('button')].map((button) => button.textContent);
    expect(buttons()).toEqual(['Cancel', 'Import anyway']);
    [...root.querySelectorAll('button')].find((button) => button.textContent === 'Import anyway')!.click();
    await wait(50);
    expect(calls).toEqual([false, true]);
    expect(root.querySelector('[role=alert]')).toBeNull();
    expect(closed).toBe(false);
    render(null, root);
    root.remove();
  });

  it('shows any other refusal with Close alone', async () => {
    const actions = { importFile: async () => Promise.reject(new StackCallError({ code: 'bad_request', message: 'This stack file is refused: "stack/a\u202Eb" has a character that changes the direction text is shown in.' })) } as unknown as StackActions;
    const root = document.createElement('div');
    document.body.append(root);
    render(h(StackFileDialog, { task: { kind: 'import', file: new File(['x'], 'bad.stack') }, actions, stacks: { cancel: async () => {} } as unknown as StacksClient, onClose: () => {}, reopen: () => {} }), root);
    await wait(50);
    expect([...root.querySelectorAll('button')].map((button) => button.textContent)).toEqual(['Close']);
    render(null, root);
    root.remove();
  });
});
