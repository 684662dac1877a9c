import { beforeEach, describe, expect, it } from 'vitest';
import type { ComputerStatus } from '../../protocol/computer.ts';
import { emptyView } from '../connection/events.ts';
import { useAppStore } from '../connection/store.ts';
import { suspendComputer } from './suspend-computer.ts';

let seq = 0;
const status = (computer: ComputerStatus) => useAppStore.getState().receive([{ type: 'computer_status', status: computer, seq: ++seq, at: 0 }]);

/** A stack client whose suspend answers `answer` and then, after `later` ms, sends `then` as an event. */
function client(answer: ComputerStatus, then?: ComputerStatus, later = 10) {
  const calls: unknown[] = [];
  return {
    calls,
    call: (async (method: string, params: unknown) => {
      calls.push([method, params]);
      if (then) setTimeout(() => status(then), later);
      return answer;
    }) as never,
  };
}

describe('suspending the computer before a restart into a new version', () => {
  beforeEach(() => useAppStore.setState({ view: emptyView }));

  it('asks nothing of a computer that is off, suspended or not there', async () => {
    for (const state of [null, { state: 'off' }, { state: 'suspended' }, { state: 'downloading', progress: 0.5, detail: '' }] as const) {
      if (state) status(state);
      const fake = client({ state: 'off' });
      await suspendComputer(fake);
      expect(fake.calls).toEqual([]);
    }
  });

  it('suspends a running computer and resolves once it reported suspended', async () => {
    status({ state: 'ready', woke: true, wake_ms: 500 });
    const fake = client({ state: 'ready', woke: true, wake_ms: 500 }, { state: 'suspended' });
    await suspendComputer(fake);
    expect(fake.calls).toEqual([['computer', { action: 'suspend' }]]);
    expect(useAppStore.getState().view.computer?.state).toBe('suspended');
  });

  it('resolves at once when the answer already says suspended', async () => {
    status({ state: 'booting', detail: '' });
    await suspendComputer(client({ state: 'suspended' }));
  });

  it('says why when the computer could not save itself, or did not say so in time', async () => {
    status({ state: 'ready', woke: false, wake_ms: 9000 });
    await expect(suspendComputer(client({ state: 'ready', woke: false, wake_ms: 9000 }, { state: 'error', message: 'the disk is full', can_reboot: true }))).rejects.toThrow(
      'the computer could not save itself (the disk is full)',
    );
    status({ state: 'ready', woke: false, wake_ms: 9000 });
    await expect(suspendComputer(client({ state: 'ready', woke: false, wake_ms: 9000 }), 50)).rejects.toThrow('the computer did not save itself within 0.05 s');
  });
});
