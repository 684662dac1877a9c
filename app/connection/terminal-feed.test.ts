import { describe, expect, it } from 'vitest';
import { createTerminalFeed, type TerminalListener } from './terminal-feed.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (chunks: Uint8Array[]) => chunks.map((chunk) => new TextDecoder().decode(chunk)).join('');

function fakeWorker() {
  const worker = { subscriptions: 0, send: (_bytes: Uint8Array) => {}, fail: false };
  const subscribe = async (listener: TerminalListener) => {
    worker.subscriptions++;
    if (worker.fail) throw new Error('no computer');
    worker.send = listener;
  };
  return { worker, subscribe };
}

describe('createTerminalFeed', () => {
  it('subscribes to the worker once, however many views listen', async () => {
    const { worker, subscribe } = fakeWorker();
    const feed = createTerminalFeed(subscribe);
    const a: Uint8Array[] = [];
    const b: Uint8Array[] = [];
    const stopA = await feed.listen((chunk) => a.push(chunk));
    await feed.listen((chunk) => b.push(chunk));
    worker.send(bytes('$ '));
    stopA();
    worker.send(bytes('ls\n'));
    expect(worker.subscriptions).toBe(1);
    expect(text(a)).toBe('$ ');
    expect(text(b)).toBe('$ ls\n');
  });

  it('replays the recent output, in one write, to a view that opens later', async () => {
    const { worker, subscribe } = fakeWorker();
    const feed = createTerminalFeed(subscribe, 8);
    const stop = await feed.listen(() => {});
    for (const part of ['old-', 'abcd', 'efgh', 'ij']) worker.send(bytes(part));
    stop();
    const later: Uint8Array[] = [];
    await feed.listen((chunk) => later.push(chunk));
    expect(later).toHaveLength(1);
    // Whole chunks are dropped once the rest still holds the limit.
    expect(text(later)).toBe('abcdefghij');
    worker.send(bytes('!'));
    expect(text(later)).toBe('abcdefghij!');
  });

  it('tries the worker again after a refused subscription', async () => {
    const { worker, subscribe } = fakeWorker();
    const feed = createTerminalFeed(subscribe);
    worker.fail = true;
    await expect(feed.listen(() => {})).rejects.toThrow('no computer');
    worker.fail = false;
    const got: Uint8Array[] = [];
    await feed.listen((chunk) => got.push(chunk));
    worker.send(bytes('ok'));
    expect(worker.subscriptions).toBe(2);
    expect(text(got)).toBe('ok');
  });
});
