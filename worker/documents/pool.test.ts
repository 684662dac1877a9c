// The pool of tesseract workers: started as jobs need them, never more than its size, a job sent
// to a worker that has its languages, and a worker that failed to start dropped.
import type { Worker as TesseractWorker } from 'tesseract.js';
import { describe, expect, it } from 'vitest';
import { ocrPoolSize, workerPool } from './ocr.ts';

function fakeWorkers(failFirst = false) {
  const made: { id: number; languages: string[]; terminated: boolean }[] = [];
  const create = async (languages: string) => {
    if (failFirst && made.length === 0) {
      made.push({ id: 0, languages: [languages], terminated: false });
      throw new Error('the language data could not be fetched');
    }
    const entry = { id: made.length, languages: [languages], terminated: false };
    made.push(entry);
    return {
      id: entry.id,
      setParameters: async () => ({}),
      reinitialize: async (next: string) => void entry.languages.push(next),
      terminate: async () => void (entry.terminated = true),
    } as unknown as TesseractWorker;
  };
  return { made, create };
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('workerPool', () => {
  it('starts a worker only when jobs overlap, never more than its size', async () => {
    const { made, create } = fakeWorkers();
    const pool = workerPool(2, create);
    await pool.run('eng', async () => tick(1));
    expect(made).toHaveLength(1);
    let running = 0;
    let most = 0;
    await Promise.all(Array.from({ length: 6 }, () => pool.run('eng', async () => {
      most = Math.max(most, ++running);
      await tick(5);
      running--;
    })));
    expect(made).toHaveLength(2);
    expect(most).toBe(2);
    await pool.terminate();
    expect(made.every((worker) => worker.terminated)).toBe(true);
  });

  it('sends a job to a free worker that already has its languages', async () => {
    const { made, create } = fakeWorkers();
    const pool = workerPool(2, create);
    const ids: number[] = [];
    const job = async (worker: TesseractWorker) => {
      ids.push((worker as unknown as { id: number }).id);
      await tick(5);
    };
    await Promise.all([pool.run('eng', job), pool.run('deu+eng', job)]);
    ids.length = 0;
    await pool.run('deu+eng', job);
    await pool.run('eng', job);
    expect(ids).toEqual([1, 0]);
    expect(made.map((worker) => worker.languages)).toEqual([['eng'], ['deu+eng']]);
  });

  it('ends the workers beyond the first once they are idle a while', async () => {
    const { made, create } = fakeWorkers();
    const pool = workerPool(2, create, 20, 10_000);
    await Promise.all([pool.run('eng', async () => tick(5)), pool.run('eng', async () => tick(5))]);
    expect(made.map((worker) => worker.terminated)).toEqual([false, false]);
    await tick(40);
    expect(made.map((worker) => worker.terminated)).toEqual([false, true]);
    // The next overlap starts a fresh one.
    await Promise.all([pool.run('eng', async () => tick(5)), pool.run('eng', async () => tick(5))]);
    expect(made).toHaveLength(3);
    await pool.terminate();
  });

  it('ends the first worker too once it is idle longer, and starts one again for the next job', async () => {
    const { made, create } = fakeWorkers();
    const pool = workerPool(2, create, 20, 60);
    await pool.run('eng', async () => tick(5));
    await tick(30);
    // A job meanwhile puts the wait off again.
    await pool.run('eng', async () => tick(5));
    await tick(40);
    expect(made.map((worker) => worker.terminated)).toEqual([false]);
    await tick(40);
    expect(made.map((worker) => worker.terminated)).toEqual([true]);
    await expect(pool.run('eng', async () => 'read')).resolves.toBe('read');
    expect(made.map((worker) => worker.terminated)).toEqual([true, false]);
    await pool.terminate();
  });

  it('ends every worker not reading when told to (the tab was hidden), and leaves one at work alone', async () => {
    const { made, create } = fakeWorkers();
    const pool = workerPool(2, create, 10_000, 10_000);
    await Promise.all([pool.run('eng', async () => tick(5)), pool.run('eng', async () => tick(5))]);
    let finish!: () => void;
    const working = pool.run('eng', () => new Promise<void>((resolve) => (finish = resolve)));
    expect(pool.releaseIdle()).toBe(1);
    await tick(1);
    expect(made.map((worker) => worker.terminated)).toEqual([false, true]);
    finish();
    await working;
    expect(pool.releaseIdle()).toBe(1);
    await tick(1);
    expect(made.map((worker) => worker.terminated)).toEqual([true, true]);
    // The next job starts one again.
    await expect(pool.run('eng', async () => 'read')).resolves.toBe('read');
    expect(made).toHaveLength(3);
    await pool.terminate();
  });

  it('warms a worker for a job about to come, which then finds it started; none if one is there', async () => {
    const { made, create } = fakeWorkers();
    const pool = workerPool(2, create, 10_000, 10_000);
    pool.warm('eng');
    expect(made).toHaveLength(1);
    pool.warm('eng');
    await expect(pool.run('eng', async (worker) => (worker as unknown as { id: number }).id)).resolves.toBe(0);
    pool.warm('eng');
    expect(made).toHaveLength(1);
    await pool.terminate();
  });

  it("ends a warmed worker no job came for after the first worker's idle time", async () => {
    const { made, create } = fakeWorkers();
    const pool = workerPool(2, create, 20, 60);
    pool.warm('eng');
    await tick(30);
    expect(made.map((worker) => worker.terminated)).toEqual([false]);
    await tick(50);
    expect(made.map((worker) => worker.terminated)).toEqual([true]);
    // A worker that could not start is dropped too, and the next job starts another.
    const failing = fakeWorkers(true);
    const second = workerPool(1, failing.create);
    second.warm('eng');
    await tick(1);
    await expect(second.run('eng', async () => 'read')).resolves.toBe('read');
    expect(failing.made).toHaveLength(2);
    await second.terminate();
  });

  it('drops a worker that could not start: the next job starts another', async () => {
    const { made, create } = fakeWorkers(true);
    const pool = workerPool(1, create);
    await expect(pool.run('eng', async () => 'read')).rejects.toThrow(/could not be fetched/);
    await expect(pool.run('eng', async () => 'read')).resolves.toBe('read');
    expect(made).toHaveLength(2);
  });
});

describe('ocrPoolSize', () => {
  it('is one per core but one (left to the page), two on two cores, as far as memory allows, between one and four', () => {
    expect(ocrPoolSize(2, 8)).toBe(2);
    expect(ocrPoolSize(2, 2)).toBe(1);
    expect(ocrPoolSize(4, 8)).toBe(3);
    expect(ocrPoolSize(16, 8)).toBe(4);
    expect(ocrPoolSize(8, 4)).toBe(2);
    expect(ocrPoolSize(1, 8)).toBe(1);
    expect(ocrPoolSize(undefined, undefined)).toBe(1);
    expect(ocrPoolSize(6, undefined)).toBe(2);
  });
});
