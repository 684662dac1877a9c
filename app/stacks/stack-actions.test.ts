import { describe, expect, it } from 'vitest';
import type { StackSummary } from '../../protocol/stacks-api.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { createStackActions, StackClosedError, type StackActionsDeps } from './stack-actions.ts';
import type { StacksClient } from './stacks-client.ts';

const stack = (id: string, name = id, bytes = 100): StackSummary => ({ id, name, bytes });

function setup(overrides: Partial<StacksClient> = {}, closeCurrent?: StackActionsDeps['closeCurrent']) {
  const calls: string[] = [];
  const stacks: StacksClient = {
    list: async () => ({ stacks: [], usage: null, quota: null }),
    create: async (name) => (calls.push(`create ${name}`), stack('s-new', name)),
    rename: async (id, name) => (calls.push(`rename ${id} ${name}`), stack(id, name)),
    checkDuplicate: async (id, { heldByCaller }) => (calls.push(`check ${id} held=${heldByCaller}`), null),
    duplicate: async (id, name, { heldByCaller }) => (calls.push(`duplicate ${id} held=${heldByCaller}`), stack('s-copy', name)),
    remove: async (id, { heldByCaller }) => (calls.push(`remove ${id} held=${heldByCaller}`), { freed: 100 }),
    exportStack: async (id, { layout, target }, _onProgress, whenStill) => {
      calls.push(`export ${id} layout=${layout} target=${target ? 'picked' : 'none'}`);
      await whenStill?.();
      calls.push('export: the stack is still');
      return { name: 'My stack', bytes: 42, file: null };
    },
    exportContents: async (id) => (calls.push(`contents ${id}`), { parts: [], secrets: [] }),
    importStack: async () => (calls.push('import'), { stack: stack('s-imported', 'Receipts'), layout: '{"state":{}}' }),
    saveResetPoint: async (id, { heldByCaller }) => (calls.push(`save point ${id} held=${heldByCaller}`), { bytes: 10 }),
    resetToPoint: async (id, { heldByCaller }) => (calls.push(`reset ${id} held=${heldByCaller}`), { bytes: 10 }),
    dropResetPoint: async (id) => (calls.push(`drop point ${id}`), null),
    restoreCheckpoint: async (id, checkpointId, { heldByCaller, layout }) => (calls.push(`restore ${id} ${checkpointId} held=${heldByCaller} layout=${layout}`), { layout: '{"then":1}' }),
    stackFromCheckpoint: async (id, checkpointId, name) => (calls.push(`from checkpoint ${id} ${checkpointId}`), { stack: stack('s-then', name), layout: null }),
    cancel: async (job) => void calls.push(`cancel ${job}`),
    forgetExport: async () => void calls.push('forget export'),
    ...overrides,
  };
  const deps: StackActionsDeps = {
    stacks,
    currentId: 'default',
    closeCurrent: closeCurrent ?? (async (mode) => void calls.push(`close current (${mode})`)),
    open: (id) => void calls.push(`open ${id}`),
    remember: (made) => void calls.push(`remember ${made.id} ${made.name}`),
    copyPageKeys: (from, to) => void calls.push(`keys ${from} -> ${to}`),
    forgetStack: (id) => void calls.push(`forget ${id}`),
    askToKeep: async () => void calls.push('ask to keep'),
    layoutOf: (id) => (id === 'default' ? '{"state":{"windows":{}}}' : null),
    setLayout: (id, layout) => void calls.push(`layout ${id} ${layout}`),
  };
  return { actions: createStackActions(deps), calls };
}

describe('stack actions', () => {
  it('asks the browser to keep the stacks when one is made, then opens it', async () => {
    const { actions, calls } = setup();
    await actions.create('Receipts');
    expect(calls).toEqual(['ask to keep', 'create Receipts', 'remember s-new Receipts', 'open s-new']);
  });

  it('closes the open stack only after the copy is known to fit, copies it as its holder, and opens the copy', async () => {
    const { actions, calls } = setup();
    await actions.duplicate('default', 'My stack (copy)');
    expect(calls).toEqual(['check default held=true', 'close current (copy)', 'duplicate default held=true', 'keys default -> s-copy', 'remember s-copy My stack (copy)', 'open s-copy']);
  });

  it('leaves the open stack open when the copy will not fit', async () => {
    const full = new StackCallError({ code: 'storage', message: '"My stack" was not duplicated: it needs 2.5 MB …' });
    const { actions, calls } = setup({ checkDuplicate: async () => Promise.reject(full) });
    await expect(actions.duplicate('default', 'copy')).rejects.toBe(full);
    expect(calls).toEqual([]);
  });

  it('says the open stack was closed when its copy fails after closing it', async () => {
    const { actions, calls } = setup({ duplicate: async () => Promise.reject(new StackCallError({ code: 'internal', message: 'disk error' })) });
    const failure = actions.duplicate('default', 'copy');
    await expect(failure).rejects.toBeInstanceOf(StackClosedError);
    await expect(failure).rejects.toThrow('disk error');
    expect(calls).toEqual(['check default held=true', 'close current (copy)']);
  });

  it('copies another stack under its own lock, without closing the one open here', async () => {
    const { actions, calls } = setup();
    await actions.duplicate('s-other', 'Other (copy)');
    expect(calls).toEqual(['check s-other held=false', 'duplicate s-other held=false', 'keys s-other -> s-copy', 'remember s-copy Other (copy)', 'open s-copy']);
  });

  it('deletes another stack and forgets its page keys, staying here', async () => {
    const { actions, calls } = setup();
    expect(await actions.remove('s-other', [stack('default'), stack('s-other')])).toEqual({ freed: 100 });
    expect(calls).toEqual(['remove s-other held=false', 'forget s-other']);
  });

  it('deletes the open stack after stopping it, then opens another; never the only one', async () => {
    const { actions, calls } = setup();
    await actions.remove('default', [stack('default'), stack('s-other')]);
    expect(calls).toEqual(['close current (delete)', 'remove default held=true', 'forget default', 'open s-other']);
    const alone = setup();
    await expect(alone.actions.remove('default', [stack('default')])).rejects.toThrow('only stack');
    expect(alone.calls).toEqual([]);
  });

  it('exports the open stack with its layout, starting while it is closed for export and going on once it is still', async () => {
    const { actions, calls } = setup();
    expect(await actions.exportCurrent(null, 'job-1', () => {})).toEqual({ name: 'My stack', bytes: 42, file: null });
    expect(calls).toEqual(['close current (export)', 'export default layout={"state":{"windows":{}}} target=none', 'export: the stack is still']);
  });

  it('asks what an export holds while the stack stays open, and carries only the secrets ticked', async () => {
    let asked: unknown = null;
    const { actions, calls } = setup({
      exportStack: async (_id, options, _onProgress, whenStill) => {
        asked = options;
        await whenStill?.();
        return { name: 'My stack', bytes: 42, file: null };
      },
    });
    expect(await actions.exportContents()).toEqual({ parts: [], secrets: [] });
    expect(calls).toEqual(['contents default']);
    await actions.exportCurrent(null, 'job-1', () => {}, { includeSecrets: ['["github","env","GITHUB_TOKEN"]'] });
    expect(asked).toMatchObject({ includeSecrets: ['["github","env","GITHUB_TOKEN"]'] });
    expect(asked).not.toHaveProperty('includeImage');
    await actions.exportCurrent(null, 'job-2', () => {});
    expect(asked).toMatchObject({ includeSecrets: [] });
  });

  it('drops the export and leaves the stack open when it cannot be closed', async () => {
    const busy = new StackCallError({ code: 'busy', message: 'The agent is working in this stack: wait for it to finish (or stop it), then try again.' });
    let heard: unknown = null;
    const { actions, calls } = setup(
      {
        exportStack: async (_id, _options, _onProgress, whenStill) => {
          await whenStill!().catch((error: unknown) => (heard = error));
          throw new StackCallError({ code: 'bad_request', message: 'not exported' });
        },
      },
      async () => Promise.reject(busy),
    );
    const failure = actions.exportCurrent(null, 'job-1', () => {});
    await expect(failure).rejects.toBe(busy);
    expect(heard).toBe(busy);
    expect(calls).toEqual(['cancel job-1']);
  });

  it('says the stack was closed when its export fails', async () => {
    const { actions } = setup({ exportStack: async () => Promise.reject(new StackCallError({ code: 'aborted', message: 'The export was cancelled.' })) });
    const failure = actions.exportCurrent(null, 'job-1', () => {});
    await expect(failure).rejects.toBeInstanceOf(StackClosedError);
    await expect(failure).rejects.toThrow('The export was cancelled.');
  });

  it('imports a file as a new stack, keeps its layout for it and opens it, leaving the open stack alone', async () => {
    const { actions, calls } = setup();
    await actions.importFile(new Blob(['x']), 'job-2', () => {});
    expect(calls).toEqual(['ask to keep', 'import', 'layout s-imported {"state":{}}', 'remember s-imported Receipts', 'open s-imported']);
  });

  it('asks the stacks worker for a file over the import ceiling only once the user said yes', async () => {
    const asked: unknown[] = [];
    const { actions } = setup({ importStack: async (_file: Blob, options: unknown) => (asked.push(options), { stack: stack('s-imported', 'Receipts'), layout: null }) });
    await actions.importFile(new Blob(['x']), 'job-3', () => {});
    await actions.importFile(new Blob(['x']), 'job-4', () => {}, { allowLarge: true });
    expect(asked).toEqual([{ job: 'job-3' }, { job: 'job-4', allowLarge: true }]);
  });

  it('restores the open stack to a checkpoint: closed as for a copy, restored as its holder with its layout, then opened again', async () => {
    const { actions, calls } = setup();
    await actions.restoreCheckpoint('c-1-abcdef');
    expect(calls).toEqual(['close current (copy)', 'restore default c-1-abcdef held=true layout={"state":{"windows":{}}}', 'layout default {"then":1}', 'open default']);
  });

  it('says the stack was closed when its restore fails', async () => {
    const { actions, calls } = setup({ restoreCheckpoint: async () => Promise.reject(new StackCallError({ code: 'storage', message: 'no room' })) });
    await expect(actions.restoreCheckpoint('c-1-abcdef')).rejects.toBeInstanceOf(StackClosedError);
    expect(calls).toEqual(['close current (copy)']);
  });

  it('opens a checkpoint as a new stack without closing the one open here', async () => {
    const { actions, calls } = setup();
    await actions.openCheckpoint('c-1-abcdef', 'Then');
    expect(calls).toEqual(['ask to keep', 'from checkpoint default c-1-abcdef', 'remember s-then Then', 'open s-then']);
  });

  it('gives a stack made of a checkpoint the window places it was taken with', async () => {
    const { actions, calls } = setup({
      stackFromCheckpoint: async (id, checkpointId, name) => (calls.push(`from checkpoint ${id} ${checkpointId}`), { stack: stack('s-then', name), layout: '{"then":1}' }),
    });
    await actions.openCheckpoint('c-1-abcdef', 'Then');
    expect(calls).toEqual(['ask to keep', 'from checkpoint default c-1-abcdef', 'layout s-then {"then":1}', 'remember s-then Then', 'open s-then']);
  });

  it('keeps the layout as it is when the restored checkpoint has none', async () => {
    const { actions, calls } = setup({ restoreCheckpoint: async (id) => (calls.push(`restore ${id}`), { layout: null }) });
    await actions.restoreCheckpoint('c-1-abcdef');
    expect(calls).toEqual(['close current (copy)', 'restore default', 'open default']);
  });
});
