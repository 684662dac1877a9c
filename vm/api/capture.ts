// A capture of the computer for a checkpoint or a stack file: its disk's overlay (only the
// chunks changed since the last capture, when it continues one) and a state that matches it,
// saved for it when something ran since the last save. Moved to the stack worker, not copied.
import * as Comlink from 'comlink';
import { CHANGE_CHUNK, type Overlay } from '../disk/overlay.ts';
import type { VmApi, VmCapture } from '../protocol.ts';
import type { VmContext } from './context.ts';
import { guard } from './errors.ts';

export function captureApi(ctx: VmContext): Pick<VmApi, 'capture'> {
  /** What the last capture() took of the overlay (its token, the state's generation). */
  let lastCapture: { token: string; overlay: Overlay; generation: string | null } | null = null;
  return {
    async capture(since) {
      // Moved, not copied (the state is 60-70 MB): what is sent back is the guard's result, so
      // that is what is marked for transfer.
      let moved: Transferable[] = [];
      const outcome = await guard(async () => {
        const current = ctx.files;
        const overlay = ctx.overlayInUse;
        if (!current || !overlay) return null;
        const asked = performance.now();
        // A quiet-time save under way: once its state is taken, with nothing happened since (no
        // command, no keystroke, no disk write: none put a save off), that state is this capture's
        // while it is still written. Otherwise it ends first: a save for this capture must not
        // race its write.
        const quiet = ctx.quietSave;
        if (quiet) await quiet.taken;
        const inFlight = quiet?.state && ctx.checkpointing && ctx.checkpointTimer === null ? quiet.state : null;
        if (!inFlight) await ctx.checkpointing;
        const continues = since !== null && lastCapture?.token === since && lastCapture.overlay === overlay;
        let copied: Omit<VmCapture, 'state' | 'stateUnchanged' | 'meta' | 'token' | 'journal' | 'handled'> | null = null;
        let saved: { generation: string; state: ArrayBuffer } | null = null;
        const copy = (generation?: string, state?: ArrayBuffer) => {
          if (generation && state) saved = { generation, state };
          overlay.flush();
          const changed = overlay.takeChanges();
          const dataSize = current.overlay.data.size;
          const map = new Uint8Array(current.overlay.map.size);
          current.overlay.map.read(map, 0);
          const count = Math.ceil(dataSize / CHANGE_CHUNK);
          const chunks: VmCapture['chunks'] = [];
          for (let index = 0; index < count; index++) {
            if (continues && !changed.has(index)) continue;
            const bytes = new Uint8Array(Math.min(CHANGE_CHUNK, dataSize - index * CHANGE_CHUNK));
            current.overlay.data.read(bytes, index * CHANGE_CHUNK);
            chunks.push({ index, bytes });
          }
          copied = { map, dataSize, full: !continues, chunks };
        };
        const began = performance.now();
        // The stored meta names the last state written; the one being written is as good.
        const meta = inFlight ? { ...current.readMeta(), state: inFlight.generation, disk: inFlight.generation } : current.readMeta();
        const activity = ctx.checkpointTimer !== null;
        if (ctx.machine && ctx.status.state === 'ready' && (activity || meta.disk !== meta.state || meta.state === null)) {
          // Something ran since the last save (or the disk moved on): save now, copy the disk while stopped.
          if (ctx.checkpointTimer) clearTimeout(ctx.checkpointTimer);
          ctx.checkpointTimer = null;
          ctx.lastCheckpoint = Date.now();
          // The capture is done once the guest runs on; the state is written to storage meanwhile.
          let ranOn = () => {};
          const running = new Promise<void>((resolve) => (ranOn = resolve));
          const saving = ctx.machine.checkpoint(copy, ranOn);
          // Cleared once written, as the quiet-time save's: the next quiet-time save and /workspace flush wait only while it runs.
          ctx.checkpointing = saving.catch((error: unknown) => console.warn('the computer was captured, but its state could not be written for a wake', error)).finally(() => (ctx.checkpointing = null));
          await Promise.race([running, saving]);
        } else {
          // Stopped, or nothing ran since the last save: the files stand still enough (a disk
          // write after this copy would mark the state stale, which the meta below records).
          if (inFlight) copy(inFlight.generation, inFlight.state);
          else copy();
        }
        // A state saved for this capture matches the disk copied with it, whatever its writing does.
        const recorded = current.readMeta();
        const fresh = saved as { generation: string; state: ArrayBuffer } | null;
        const after = fresh ? { ...recorded, state: fresh.generation, disk: fresh.generation } : recorded;
        const valid = after.state !== null && after.state === after.disk;
        const stateUnchanged = valid && continues && lastCapture!.generation === after.state;
        // A copy of a fresh state: the original is still being written.
        const state = valid && !stateUnchanged ? (fresh ? fresh.state.slice(0) : await current.store.readState()) : null;
        const journal = fresh && ctx.savedJournal?.generation === fresh.generation ? new TextEncoder().encode(JSON.stringify(ctx.savedJournal)) : null;
        const token = crypto.randomUUID();
        const phases = fresh && ctx.machine?.lastSave ? `: sync ${Math.round(ctx.machine.lastSave.syncMs)}, stop ${Math.round(ctx.machine.lastSave.stopMs)}, save_state ${Math.round(ctx.machine.lastSave.saveStateMs)} ms` : '';
        const waited = began - asked > 5 ? ` after waiting ${Math.round(began - asked)} ms for a save under way` : '';
        const asTaken = inFlight ? ', the state of the save being written' : '';
        const detail = `${Math.round(performance.now() - began)} ms${waited} (${fresh && !inFlight ? 'saved for it' : 'as last saved'}${asTaken}; ${copied!.chunks.length} disk chunks${state ? `, state ${(state.byteLength / 1e6).toFixed(1)} MB` : ''}${phases})`;
        console.info(`computer captured in ${detail}`);
        lastCapture = { token, overlay, generation: valid ? after.state : null };
        const result: VmCapture = { token, meta: valid ? after : { ...after, state: null, disk: null }, state: state && new Uint8Array(state), stateUnchanged, journal, ...copied!, handled: { from: performance.timeOrigin + asked, to: performance.timeOrigin + performance.now(), detail } };
        moved = [...(state ? [state] : []), ...(journal ? [journal.buffer] : []), result.map.buffer, ...result.chunks.map((chunk) => chunk.bytes.buffer)];
        return result;
      });
      return Comlink.transfer(outcome, moved);
    },
  };
}
