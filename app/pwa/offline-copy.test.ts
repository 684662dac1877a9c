import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { emptyView, type StackView } from '../connection/events.ts';
import { offlineCopyWaitsFor, startOfflineCopyWhenQuiet, watchInput } from './offline-copy.ts';

const reading = (status: 'uploaded' | 'processing' | 'ready' | 'failed'): StackView => ({ ...emptyView, documents: { 'documents/scan.pdf': { id: 'd1', status, error: null } } });

describe('when a first visit makes its offline copy', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** A store of one view, with listeners, and the count of starts. */
  function schedule(initial: StackView, input = { at: 0 }) {
    let current = initial;
    const listeners = new Set<() => void>();
    const started = { count: 0 };
    startOfflineCopyWhenQuiet({
      view: () => current,
      subscribe: (listener) => (listeners.add(listener), () => listeners.delete(listener)),
      lastInputAt: () => input.at,
      now: () => Date.now(),
      start: () => started.count++,
    });
    const set = (view: StackView) => {
      current = view;
      for (const listener of [...listeners]) listener();
    };
    return { started, set, listeners };
  }

  it('names what it waits for: the computer download, a document being read, or nothing', () => {
    expect(offlineCopyWaitsFor(emptyView)).toBeNull();
    expect(offlineCopyWaitsFor({ ...emptyView, computer: { state: 'downloading', progress: 0.1, detail: '' } })).toBe('computer download');
    expect(offlineCopyWaitsFor(reading('uploaded'))).toBe('document reading');
    expect(offlineCopyWaitsFor(reading('processing'))).toBe('document reading');
    expect(offlineCopyWaitsFor(reading('ready'))).toBeNull();
    expect(offlineCopyWaitsFor(reading('failed'))).toBeNull();
  });

  it('starts a few seconds after the page when nothing is under way, and once only', () => {
    const { started, set, listeners } = schedule(emptyView);
    vi.advanceTimersByTime(2_999);
    expect(started.count).toBe(0);
    vi.advanceTimersByTime(1);
    expect(started.count).toBe(1);
    set(reading('ready'));
    vi.advanceTimersByTime(200_000);
    expect(started.count).toBe(1);
    expect(listeners.size).toBe(0);
  });

  it('waits while a document is read, and starts when it is ready', () => {
    const { started, set } = schedule(reading('processing'));
    vi.advanceTimersByTime(30_000);
    expect(started.count).toBe(0);
    set(reading('ready'));
    expect(started.count).toBe(1);
  });

  it('does not start before the page settled, even with nothing under way', () => {
    const { started, set } = schedule(reading('processing'));
    set(reading('ready'));
    expect(started.count).toBe(0);
    vi.advanceTimersByTime(3_000);
    expect(started.count).toBe(1);
  });

  it('waits for the user to pause typing: two seconds after the last key, moved on by each new one', () => {
    const input = { at: 0 };
    const { started, set } = schedule(reading('processing'), input);
    vi.advanceTimersByTime(10_000);
    input.at = Date.now();
    set(reading('ready'));
    expect(started.count).toBe(0);
    vi.advanceTimersByTime(1_500);
    input.at = Date.now(); // another key
    vi.advanceTimersByTime(500);
    expect(started.count).toBe(0);
    vi.advanceTimersByTime(1_499);
    expect(started.count).toBe(0);
    vi.advanceTimersByTime(1);
    expect(started.count).toBe(1);
  });

  it('starts at the cap whatever is under way', () => {
    const { started } = schedule(reading('processing'));
    vi.advanceTimersByTime(119_999);
    expect(started.count).toBe(0);
    vi.advanceTimersByTime(1);
    expect(started.count).toBe(1);
    vi.advanceTimersByTime(200_000);
    expect(started.count).toBe(1);
  });

  it('starts at the cap however long the user keeps typing', () => {
    const input = { at: 0 };
    const { started } = schedule(emptyView, input);
    for (let t = 0; t < 119_900; t += 100) {
      input.at = Date.now();
      vi.advanceTimersByTime(100);
    }
    expect(started.count).toBe(0);
    vi.advanceTimersByTime(100);
    expect(started.count).toBe(1);
  });
});

describe('the user input the offline copy waits out', () => {
  it('notes keys, touches and wheel turns as they happen, nothing before, and nothing once stopped', () => {
    const target = new EventTarget();
    const { lastInputAt: last, stop } = watchInput(target as unknown as Window);
    expect(last()).toBe(0);
    const before = performance.now();
    target.dispatchEvent(new Event('keydown'));
    expect(last()).toBeGreaterThanOrEqual(before);
    const first = last();
    target.dispatchEvent(new Event('mousemove'));
    expect(last()).toBe(first);
    for (const type of ['pointerdown', 'wheel']) {
      const at = performance.now();
      target.dispatchEvent(new Event(type));
      expect(last()).toBeGreaterThanOrEqual(at);
    }
    const kept = last();
    stop();
    for (const type of ['keydown', 'pointerdown', 'wheel']) target.dispatchEvent(new Event(type));
    expect(last()).toBe(kept);
  });
});
