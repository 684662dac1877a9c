// The open stack's checkpoints: taken before a mission's first change and on demand, listed for
// the timeline and the agent, pruned by a visible rule. Restoring one, or opening it as a new
// stack, needs the stack still, so the stacks worker does that (restore.ts).
import type { Computer } from '../computer.ts';
import type { CheckpointInfo, CheckpointList } from '../../protocol/checkpoints.ts';
import type { StackEventBody } from '../../protocol/events.ts';
import { checkpointSources, isComputerFile, isDatabaseFile, isUserFile, type DatabaseCopies } from './sources.ts';
import { CHECKPOINTS_DIR, checkpointStore, digestState, KEEP_RULE, type CheckpointFile, type CheckpointReason, type CheckpointRecord, type CheckpointSource, type CheckpointStore } from './store.ts';

export interface CheckpointsDeps {
  /** The stack's folder in OPFS. */
  stackDir(): Promise<FileSystemDirectoryHandle>;
  /** Consistent copies of the databases (VACUUM INTO), in memory. */
  copyDatabases(): Promise<DatabaseCopies>;
  computer: Computer | undefined;
  emit(event: StackEventBody): void;
  now?: () => number;
}

export interface Checkpoints {
  /**
   * Takes a checkpoint; resolves once it is stored. `held` is called as soon as what it holds is
   * fixed (the computer saved, the databases copied, every file changed since the last checkpoint
   * read): the stack may change from then on while it is being stored. It answers whether the
   * caller still waited for that: false (it went on, so the stack may already have changed) drops
   * the checkpoint, which could not say what it holds, and `take` rejects with CheckpointDropped.
   */
  take(reason: CheckpointReason, label: string, layout?: string | null, held?: () => boolean): Promise<CheckpointInfo>;
  list(): Promise<CheckpointList>;
  remove(id: string): Promise<CheckpointList>;
  /** Resolves once no checkpoint is being taken (before the stack closes). */
  idle(): Promise<void>;
  /** What the checkpoint being taken is doing, for a message when it is slow; null when none is. */
  doing(): string | null;
}

/** A checkpoint whose caller went on before it held the stack: none is kept. */
export class CheckpointDropped extends Error {
  constructor() {
    super('the stack went on changing before it was held, so none was kept');
    this.name = 'CheckpointDropped';
  }
}

/**
 * What a checkpoint reads into memory before the stack may change again (the files changed since
 * the last one); past it, the stack waits for the whole checkpoint to be stored instead.
 */
const HOLD_IN_MEMORY = 256 * 1024 * 1024;

/**
 * The sources with every file changed since `previous` read into memory, so that the stack can
 * change while they are stored; null when that would be more than HOLD_IN_MEMORY. Unchanged files
 * (same stamp) are taken from the last checkpoint unread; the databases' copies and the computer's
 * capture belong to this checkpoint alone.
 */
export async function fixedSources(sources: CheckpointSource[], previous: Record<string, CheckpointFile> | undefined): Promise<CheckpointSource[] | null> {
  const changing = sources.filter((source) => {
    if (source.stamp === undefined || source.bytes || source.stamp.startsWith('generation:')) return false;
    const before = previous?.[source.path];
    return !(before && before.stamp === source.stamp && before.size === source.size);
  });
  if (changing.reduce((sum, source) => sum + source.size, 0) > HOLD_IN_MEMORY) return null;
  const read = new Map<CheckpointSource, Uint8Array>();
  for (const source of changing) {
    const bytes = await source.read(0, source.size);
    if (bytes.byteLength !== source.size) throw new Error(`${source.path} changed while it was read`);
    read.set(source, bytes);
  }
  return sources.map((source) => {
    const bytes = read.get(source);
    return bytes ? { ...source, read: async (at: number, length: number) => bytes.subarray(at, at + length) } : source;
  });
}

/** Paths listed per change kind in a checkpoint's summary; the rest are counted by the page. */
const LISTED = 50;
export const KEEP_RULE_TEXT = `the newest ${KEEP_RULE.last}, and the newest of each day for ${KEEP_RULE.days} days`;

export function checkpointInfo(record: CheckpointRecord): CheckpointInfo {
  const { added, removed, changed, computer, databases } = record.changes;
  return {
    id: record.id,
    created_at: record.created_at,
    reason: record.reason,
    label: record.label,
    changes: {
      added: added.slice(0, LISTED),
      removed: removed.slice(0, LISTED),
      changed: changed.slice(0, LISTED),
      counts: { added: added.length, removed: removed.length, changed: changed.length },
      computer,
      databases,
    },
    added_bytes: record.added_bytes,
    total_bytes: record.total_bytes,
  };
}

/** The checkpoints of a stack folder (also the stacks worker's, for a still stack). */
export async function openCheckpointStore(stack: FileSystemDirectoryHandle, options: { now?: () => number; owner?: boolean } = {}): Promise<CheckpointStore> {
  const system = await stack.getDirectoryHandle('.os', { create: true });
  return checkpointStore(await system.getDirectoryHandle(CHECKPOINTS_DIR, { create: true }), options);
}

/**
 * Where earlier versions made the databases' copies for a checkpoint (beside an export's), in a
 * folder each: what a killed tab left there is removed at the next open.
 */
const SNAPSHOTS = 'snapshot';
const SYSTEM_DIR = '.os';

async function removeTmp(stack: FileSystemDirectoryHandle): Promise<void> {
  const system = await stack.getDirectoryHandle(SYSTEM_DIR).catch(() => null);
  const folder = system && (await system.getDirectoryHandle(SNAPSHOTS).catch(() => null));
  if (!folder) return;
  const names: string[] = [];
  for await (const [name, handle] of (folder as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) if (handle.kind === 'directory') names.push(name);
  for (const name of names) await folder.removeEntry(name, { recursive: true }).catch(() => {});
}

/**
 * Takes a checkpoint before a change and waits until it holds the stack, not until it is stored,
 * and at most `waitMs`: a checkpoint never holds a mission up for long. Past that the caller goes
 * on without it (the checkpoint is dropped when it gets there: CheckpointDropped), and `failed`
 * is told once, saying what it was still doing; as it is when the checkpoint cannot be taken.
 */
export async function checkpointBefore(checkpoints: Pick<Checkpoints, 'take' | 'doing'>, reason: CheckpointReason, label: string, waitMs: number, failed: (error: unknown) => void): Promise<void> {
  let said = false;
  const fail = (error: unknown) => {
    if (said) return;
    said = true;
    failed(error);
  };
  let wentOn = false;
  let resolveHeld!: () => void;
  const heldNow = new Promise<void>((resolve) => (resolveHeld = resolve));
  const taken = checkpoints.take(reason, label, undefined, () => {
    if (wentOn) return false;
    resolveHeld();
    return true;
  });
  taken.catch(fail);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`it was still ${checkpoints.doing() ?? 'being taken'} after ${waitMs / 1000} s, and the mission did not wait longer`)), waitMs);
  });
  try {
    await Promise.race([heldNow, taken, late]);
  } catch (error) {
    fail(error);
  } finally {
    // Whatever happened, the caller goes on from here: a checkpoint not held by now is not kept.
    wentOn = true;
    clearTimeout(timer);
  }
}

export const checkpointKinds = { isUserFile, isComputer: isComputerFile, isDatabase: isDatabaseFile };

export function createCheckpoints(deps: CheckpointsDeps): Checkpoints {
  let store: Promise<CheckpointStore> | null = null;
  const open = () =>
    (store ??= deps.stackDir().then(async (dir) => {
      await removeTmp(dir);
      return openCheckpointStore(dir, deps.now ? { now: deps.now } : {});
    }));
  /** The VM worker's capture behind the newest checkpoint: the next copies only what changed since. */
  let lastCapture: { token: string; checkpoint: string } | null = null;
  let latestLayout: string | null = null;
  let taking: Promise<unknown> = Promise.resolve();
  let queued = 0;
  let doing: string | null = null;

  async function list(): Promise<CheckpointList> {
    const kept = await open();
    return { checkpoints: (await kept.list()).map(checkpointInfo), bytes: await kept.bytes(), rule: KEEP_RULE_TEXT };
  }

  async function takeNow(reason: CheckpointReason, label: string, layout: string | null | undefined, held: (() => boolean) | undefined): Promise<CheckpointInfo> {
    if (layout !== undefined) latestLayout = layout;
    doing = deps.computer ? 'saving the computer' : 'copying the databases';
    const kept = await open();
    const newest = (await kept.list())[0];
    const since = lastCapture && newest && lastCapture.checkpoint === newest.id ? lastCapture.token : null;
    const started = performance.now();
    let captured = started;
    let handover = '';
    let heldAt: number | null = null;
    const at: number[] = [];
    // The databases are copied (in memory) while the VM worker saves the computer. The files are
    // listed after that save, which brings the guest's /workspace changes into the folder.
    const copying = deps.copyDatabases().then((copies) => (at.push(performance.now()), copies));
    copying.catch(() => {}); // a capture that fails first is the error told
    const wall = () => performance.timeOrigin + performance.now();
    const asked = wall();
    const capture = deps.computer
      ? await deps.computer.capture(since).then((value) => {
          captured = performance.now();
          // Where the time went between this worker and the VM worker's.
          if (value?.handled) handover = `: taken up after ${Math.round(value.handled.from - asked)} ms, captured in ${value.handled.detail ?? Math.round(value.handled.to - value.handled.from)}, back after ${Math.round(wall() - value.handled.to)}`;
          return value;
        })
      : null;
    // The state is cut and hashed while the databases' copies end and the files are listed.
    const stateDigest = capture?.state ? digestState(capture.state) : undefined;
    stateDigest?.catch(() => {}); // a listing that fails first is the error told
    doing = 'copying the databases';
    const databases = await copying;
    doing = 'listing the files';
    const listed = await checkpointSources(await deps.stackDir(), { databases, capture, ...(newest ? { previous: newest.files } : {}), ...(stateDigest ? { stateDigest } : {}) });
    at.push(performance.now());
    doing = 'reading the files changed';
    const sources = held ? await fixedSources(listed, newest?.files) : null;
    if (sources) {
      if (!held!()) throw new CheckpointDropped();
      heldAt = performance.now();
    }
    doing = 'storing it';
    const record = await kept.take({ reason, label, layout: latestLayout, sources: sources ?? listed, ...checkpointKinds });
    at.push(performance.now());
    // Stored whole, it held the stack until now; if its caller went on meanwhile, it may hold
    // some of what came after, and is not kept.
    if (heldAt === null && held && !held()) {
      await kept.remove(record.id);
      throw new CheckpointDropped();
    }
    if (capture) lastCapture = { token: capture.token, checkpoint: record.id };
    await kept.prune();
    const [copied, listedAt, stored] = at.map((t) => Math.round(t - started));
    const holding = heldAt === null ? '' : `, held ${Math.round(heldAt - started)}`;
    console.info(
      `checkpoint ${record.id} taken in ${Math.round(performance.now() - started)} ms (computer saved ${Math.round(captured - started)}${handover}, databases copied ${copied}, files listed ${listedAt}${holding}, stored ${stored} ms after the start): ${(record.added_bytes / 1e6).toFixed(2)} MB added`,
    );
    const info = checkpointInfo(record);
    deps.emit({ type: 'checkpoint_taken', checkpoint: info });
    return info;
  }

  return {
    take(reason, label, layout, held) {
      // One at a time: a second waits for the first (they share the computer's capture token).
      queued += 1;
      if (doing === null) doing = 'waiting for the checkpoint before it';
      const next = taking.then(() => takeNow(reason, label, layout, held));
      taking = next.catch(() => {}).finally(() => {
        queued -= 1;
        doing = queued ? 'waiting for the checkpoint before it' : null;
      });
      return next;
    },
    doing: () => doing,
    list,
    async idle() {
      await taking;
    },
    async remove(id) {
      await (await open()).remove(id);
      return list();
    },
  };
}
