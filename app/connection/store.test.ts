import { beforeEach, describe, expect, it } from 'vitest';
import type { StackSnapshot } from '../../protocol/stack-api.ts';
import { emptyView } from './events.ts';
import { useAppStore } from './store.ts';

const SNAPSHOT: StackSnapshot = {
  windows: [{ id: 'w1', kind: 'terminal', title: 'Terminal', created_at: 0, updated_at: 0 }],
  settings: { provider: 'proxy', endpoint: 'https://proxy', has_api_key: false, model: 'm', heartbeat_minutes: 0, ocr_engine: 'local', computer_network: true },
  trust: null,
  model: { state: 'unknown' },
  computer: { state: 'downloading', progress: 0.1, detail: 'disk image' },
  last_seq: 3,
};

describe('the store', () => {
  beforeEach(() => useAppStore.setState({ view: emptyView }));

  it('takes the computer from the snapshot, then follows its events', () => {
    useAppStore.getState().loadSnapshot(SNAPSHOT);
    expect(useAppStore.getState().view.computer).toEqual({ state: 'downloading', progress: 0.1, detail: 'disk image' });
    expect(useAppStore.getState().view.windows.map((win) => win.kind)).toEqual(['terminal']);
    // Replayed history up to the snapshot leaves it alone; what came after applies.
    useAppStore.getState().receive([
      { type: 'computer_status', status: { state: 'off' }, seq: 2, at: 0 },
      { type: 'computer_status', status: { state: 'ready', woke: true, wake_ms: 700 }, seq: 4, at: 0 },
    ]);
    expect(useAppStore.getState().view.computer).toEqual({ state: 'ready', woke: true, wake_ms: 700 });
  });
});
