// The terminal's pieces of UI in Chromium: the subbar's + menu and the computer's overlay. (The
// header chip reads the zustand store through React hooks, which this project does not alias to
// preact/compat; the e2e tests cover it.)
import { h, render, type ComponentChildren } from 'preact';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { userEvent } from 'vitest/browser';
import type { ComputerStatus } from '../../protocol/computer.ts';
import { AddWindowMenu } from './AddWindowMenu.tsx';
import { ComputerOverlay } from './ComputerOverlay.tsx';
import type { StackClient } from '../connection/stack-client.ts';
import { StackClientContext } from '../connection/stack-context.ts';

const root = document.createElement('div');
document.body.append(root);
afterEach(() => render(null, root));

const calls: [string, unknown][] = [];
const client = {
  stackId: 's',
  call: async (method: string, params: unknown) => {
    calls.push([method, params]);
    return { state: 'booting', detail: '' } satisfies ComputerStatus;
  },
} as unknown as StackClient;
const withClient = (child: ComponentChildren) => h(StackClientContext.Provider, { value: client }, child);

beforeEach(() => {
  calls.length = 0;
});

describe('the + menu', () => {
  it('opens, moves with the arrow keys, chooses, and closes on Escape without it reaching the page', async () => {
    const chosen: string[] = [];
    let escapes = 0;
    const onKey = (event: KeyboardEvent) => void (event.key === 'Escape' && escapes++);
    document.addEventListener('keydown', onKey);
    const choices = ['Notes', 'Terminal'].map((label) => ({ label, icon: '*', choose: () => void chosen.push(label) }));
    render(h(AddWindowMenu, { choices }), root);
    const toggle = root.querySelector('button[aria-label="Add a window"]') as HTMLButtonElement;
    // Preact renders on the next tick: each check waits for it.
    await userEvent.click(toggle);
    await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('true');
    await expect.poll(() => document.activeElement?.textContent).toContain('Notes');
    await userEvent.keyboard('{ArrowDown}');
    await expect.poll(() => document.activeElement?.textContent).toContain('Terminal');
    await userEvent.keyboard('{Enter}');
    await expect.poll(() => chosen).toEqual(['Terminal']);
    await expect.poll(() => root.querySelector('[role=menu]')).toBeNull();
    await userEvent.click(toggle);
    await expect.poll(() => root.querySelector('[role=menu]')).not.toBeNull();
    await userEvent.keyboard('{Escape}');
    await expect.poll(() => root.querySelector('[role=menu]')).toBeNull();
    await expect.poll(() => document.activeElement).toBe(toggle);
    expect(escapes).toBe(0);
    document.removeEventListener('keydown', onKey);
  });
});

describe('the overlay', () => {
  it('shows the download progress, and a restart button after an error', async () => {
    render(withClient(h(ComputerOverlay, { status: { state: 'downloading', progress: 0.5, detail: '120 of 240 MB' } })), root);
    expect((root.querySelector('progress') as HTMLProgressElement).value).toBe(0.5);
    expect(root.textContent).toContain('50% · 120 of 240 MB');
    render(withClient(h(ComputerOverlay, { status: { state: 'error', message: 'kernel panic', can_reboot: true } })), root);
    expect(root.textContent).toContain('kernel panic');
    await userEvent.click(root.querySelector('button')!);
    await expect.poll(() => calls.at(-1)).toEqual(['computer', { action: 'reboot' }]);
  });
});
