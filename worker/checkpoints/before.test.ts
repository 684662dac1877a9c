// The wait before a mission's first change: until the checkpoint holds the stack, at most so long;
// a checkpoint the mission stopped waiting for is dropped (its `held` answers false).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CheckpointInfo } from '../../protocol/checkpoints.ts';
import { checkpointBefore, CheckpointDropped, type Checkpoints } from './checkpoints.ts';

/** A checkpoint that holds the stack after `holdMs` and is stored 10 ms later, as the real one does (dropped when `held` says so). */
function slowCheckpoints(holdMs: number) {
  const answers: boolean[] = [];
  let doing: string | null = null;
  const checkpoints: Pick<Checkpoints, 'take' | 'doing'> = {
    doing: () => doing,
    take: (_reason, label, _layout, held) =>
      new Promise<CheckpointInfo>((resolve, reject) => {
        doing = 'saving the computer';
        setTimeout(() => {
          const waited = held!();
          answers.push(waited);
          doing = null;
          if (!waited) return reject(new CheckpointDropped());
          setTimeout(() => resolve({ id: 'c-1', label } as CheckpointInfo), 10);
        }, holdMs);
      }),
  };
  return { checkpoints, answers };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('checkpointBefore', () => {
  it('goes on as soon as the checkpoint holds the stack, before it is stored', async () => {
    const { checkpoints, answers } = slowCheckpoints(3_000);
    const failed = vi.fn();
    let done = false;
    const waiting = checkpointBefore(checkpoints, 'mission', 'tidy up', 15_000, failed).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(2_999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    expect(answers).toEqual([true]);
    expect(failed).not.toHaveBeenCalled();
  });

  it('past the wait goes on saying what the checkpoint was still doing, and the checkpoint is dropped, not kept', async () => {
    const { checkpoints, answers } = slowCheckpoints(20_000);
    const failed = vi.fn();
    const waiting = checkpointBefore(checkpoints, 'mission', 'tidy up', 15_000, failed);
    await vi.advanceTimersByTimeAsync(15_000);
    await waiting;
    expect(failed).toHaveBeenCalledTimes(1);
    expect(String(failed.mock.calls[0]![0])).toContain('it was still saving the computer after 15 s');
    // When it gets to holding the stack, the mission is long gone: it drops itself, told once only.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(answers).toEqual([false]);
    expect(failed).toHaveBeenCalledTimes(1);
  });

  it('says once why a checkpoint could not be taken, and goes on at once', async () => {
    const failed = vi.fn();
    const full = Object.assign(new Error('the quota was exceeded'), { name: 'QuotaExceededError' });
    await checkpointBefore({ doing: () => null, take: () => Promise.reject(full) }, 'scheduled', 'nightly', 15_000, failed);
    expect(failed).toHaveBeenCalledTimes(1);
    expect(failed).toHaveBeenCalledWith(full);
  });
});
