import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { watchHiddenTab } from './hidden-tab.ts';
import type { ComputerStatus } from '../../protocol/computer.ts';

function setup(state: { computer: ComputerStatus['state']; busy?: boolean } = { computer: 'ready' }) {
  const document = Object.assign(new EventTarget(), { visibilityState: 'visible' as DocumentVisibilityState });
  const window = new EventTarget();
  const calls: string[] = [];
  const client = {
    call: vi.fn(async (method: string, params: { action?: string }) => {
      calls.push(params.action ? `${method} ${params.action}` : method);
      if (params.action === 'rest' && state.computer === 'ready' && !state.busy) state.computer = 'suspended';
      if (params.action === 'start') state.computer = 'ready';
      return { state: state.computer };
    }),
  };
  const stop = watchHiddenTab({ document, window, client: client as never, computerState: () => state.computer, restAfterMs: 30_000 });
  const show = (visibility: DocumentVisibilityState) => {
    document.visibilityState = visibility;
    document.dispatchEvent(new Event('visibilitychange'));
  };
  return { document, window, calls, state, stop, show };
}

describe('watchHiddenTab', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('hidden: saves and releases at once; after 30 s hidden the computer rests, and shown again it wakes', async () => {
    const { calls, state, show, stop } = setup();
    show('hidden');
    expect(calls).toEqual(['computer save', 'release_memory']);
    await vi.advanceTimersByTimeAsync(29_000);
    expect(calls).not.toContain('computer rest');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.at(-1)).toBe('computer rest');
    expect(state.computer).toBe('suspended');
    show('visible');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.at(-1)).toBe('computer start');
    stop();
  });

  it('shown again within 30 s: nothing rests, nothing wakes', async () => {
    const { calls, show, stop } = setup();
    show('hidden');
    await vi.advanceTimersByTimeAsync(10_000);
    show('visible');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toEqual(['computer save', 'release_memory']);
    stop();
  });

  it('frozen: rests at once', async () => {
    const { document, calls, stop } = setup();
    document.dispatchEvent(new Event('freeze'));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual(['computer save', 'release_memory', 'computer rest']);
    stop();
  });

  it('a computer that was not running is left alone, and not started when shown', async () => {
    const { calls, show, stop } = setup({ computer: 'suspended' });
    show('hidden');
    await vi.advanceTimersByTimeAsync(31_000);
    show('visible');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual(['computer save', 'release_memory']);
    stop();
  });

  it('a computer kept up (the agent working, a server running: rest declined) is not started when shown', async () => {
    const { calls, show, stop } = setup({ computer: 'ready', busy: true });
    show('hidden');
    await vi.advanceTimersByTimeAsync(31_000);
    expect(calls.at(-1)).toBe('computer rest');
    show('visible');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).not.toContain('computer start');
    stop();
  });
});
