// The shared busy indicator: it turns in quarter steps a few times a second (not at the display's
// rate), every spinner on one timer that stops with the last of them.
import { h, render } from 'preact';
import { describe, expect, it, vi } from 'vitest';
import { Spinner } from './Spinner.tsx';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Spinner', () => {
  it('turns every spinner a quarter at a time on one timer, and stops with the last one', async () => {
    const root = document.createElement('div');
    document.body.append(root);
    render(h('div', null, h(Spinner, null), h(Spinner, null)), root);
    const [a, b] = [...root.querySelectorAll<HTMLElement>('.spinner')];
    expect(getComputedStyle(a!).animationName).toBe('none');
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      await wait(130);
      expect(a!.style.transform).toBe(b!.style.transform);
      seen.add(a!.style.transform);
    }
    // Three or four quarter turns in 780 ms: a few changes a second, not one a frame.
    seen.delete(''); // before the first turn
    expect([...seen].every((t) => /^rotate\((0|90|180|270)deg\)$/.test(t))).toBe(true);
    expect(seen.size).toBeGreaterThanOrEqual(2);
    const cleared = vi.spyOn(globalThis, 'clearInterval');
    render(h('div', null, h(Spinner, null)), root);
    expect(cleared).not.toHaveBeenCalled();
    render(null, root);
    await wait(50);
    expect(cleared).toHaveBeenCalledTimes(1);
    cleared.mockRestore();
    root.remove();
  });
});
