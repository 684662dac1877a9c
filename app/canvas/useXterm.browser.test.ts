// The terminal view in Chromium with a fake shell: xterm loads lazily, shows what the shell
// writes, sends keystrokes (Esc too) as bytes, and tells the shell its size as the window resizes.
import { h, render } from 'preact';
import { useRef } from 'preact/hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { userEvent } from 'vitest/browser';
import type { TerminalLink } from '../connection/stack-client.ts';
import { useXterm } from './useXterm.ts';

function fakeLink() {
  const sizes: [number, number][] = [];
  const typed: number[] = [];
  let write: (bytes: Uint8Array) => void = () => {};
  const link: TerminalLink = {
    listen: async (listener) => {
      write = listener;
      return () => (write = () => {});
    },
    input: async (bytes) => void typed.push(...bytes),
    resize: async (cols, rows) => void sizes.push([cols, rows]),
  };
  return { link, sizes, typed, write: (text: string) => write(new TextEncoder().encode(text)) };
}

const root = document.createElement('div');
document.body.append(root);
afterEach(() => render(null, root));

function View({ link }: { link: TerminalLink }) {
  const host = useRef<HTMLDivElement>(null);
  useXterm(host, link, 'w1', true);
  return h('div', { id: 'box', style: 'position: relative; width: 640px; height: 300px' }, h('div', { ref: host, style: 'position: absolute; inset: 0', 'data-terminal': '' }));
}

describe('useXterm', () => {
  it('shows the shell, types into it and follows the size', async () => {
    const shell = fakeLink();
    render(h(View, { link: shell.link }), root);
    await expect.poll(() => document.querySelector('.xterm-rows'), { timeout: 20_000 }).toBeTruthy();
    await expect.poll(() => shell.sizes.length).toBeGreaterThan(0);
    const [cols, rows] = shell.sizes.at(-1)!;
    expect(cols).toBeGreaterThan(40);
    expect(rows).toBeGreaterThan(8);

    shell.write('root@stack:~# ');
    await expect.poll(() => document.querySelector('.xterm-rows')?.textContent).toContain('root@stack:~#');

    (document.querySelector('.xterm-helper-textarea') as HTMLTextAreaElement).focus();
    await userEvent.keyboard('lsé{Enter}{Escape}');
    await expect.poll(() => new TextDecoder().decode(new Uint8Array(shell.typed))).toBe('lsé\r\x1b');

    (document.getElementById('box') as HTMLElement).style.width = '320px';
    await expect.poll(() => shell.sizes.at(-1)![0]).toBeLessThan(cols);
  });
});
