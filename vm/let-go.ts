// Large buffers given back at once rather than at the worker's next full garbage collection.
//
// Among them v86's own copies of the guest's RAM. A save packs the guest's non-zero pages into a
// buffer of their own (`pack_memory`) and then copies that into the state it returns; a restore
// slices the state's packed RAM out into a buffer of its own and unpacks it into the guest
// (`unpack_memory`). Each copy is as large as the RAM in use (55-140 MB) and is garbage once the
// call ends, yet its memory stays with the VM worker until the worker's next full collection:
// seconds to minutes, and a computer in use saves itself after each quiet spell. Here each is
// detached (letGo) the moment v86 is done with it.
//
// Only for buffers made in JavaScript and handed to no browser API but a sync access handle's
// write: v86's copies and the states it saves. A buffer the browser made (a fetch's, a Blob's, a
// file's) or one it has seen (hashed by `crypto.subtle`, read into) is held by the browser's own
// wrapper until that wrapper is collected; detaching it gives nothing back and only hides it from
// V8's count, which is what starts collections. Measured in a worker, 1,000 buffers of 300 KB
// (PSS after): made in JavaScript, let go of 47 MB, dropped 87; a Blob's bytes let go of 358,
// dropped 74; hashed then let go of 339, dropped 82; a file's let go of 351, dropped 134.
/**
 * Gives a large buffer's memory back now (it is detached), where dropping it waits for the
 * worker's next full garbage collection: seconds to minutes, while a saved state is 50-150 MB and
 * each save and wake makes one. Where `ArrayBuffer.prototype.transfer` is missing, it is dropped.
 * Only for a buffer made in JavaScript (above).
 */
export function letGo(buffer: ArrayBuffer): void {
  (buffer as { transfer?: (length: number) => ArrayBuffer }).transfer?.(0);
}

/** The part of v86's CPU (`emulator.v86.cpu`) whose copies are let go of. */
export interface V86MemoryCopies {
  pack_memory(): { bitmap: unknown; packed_memory: Uint8Array<ArrayBuffer> };
  unpack_memory(bitmap: unknown, packed: Uint8Array<ArrayBuffer>): void;
}

const covered = new WeakSet<object>();

/**
 * Wraps `cpu`'s pack and unpack so that each packed copy is let go of once v86 used it. Call it
 * once the emulator has its CPU and before it restores or saves a state (again: nothing more).
 */
export function letGoOfCopies(cpu: V86MemoryCopies): void {
  if (covered.has(cpu)) return;
  covered.add(cpu);
  const pack = cpu.pack_memory;
  const unpack = cpu.unpack_memory;
  cpu.pack_memory = function (this: V86MemoryCopies) {
    const packed = pack.call(this);
    // v86's save copies it into the state within the same synchronous call, which this follows.
    queueMicrotask(() => letGo(packed.packed_memory.buffer));
    return packed;
  };
  cpu.unpack_memory = function (this: V86MemoryCopies, bitmap, packed) {
    unpack.call(this, bitmap, packed);
    letGo(packed.buffer);
  };
}

/** The CPU of a real v86 emulator once it has one (a test's stand-in has none). */
export function v86Cpu(emulator: unknown): V86MemoryCopies | null {
  const cpu = (emulator as { v86?: { cpu?: Partial<V86MemoryCopies> } }).v86?.cpu;
  return typeof cpu?.pack_memory === 'function' && typeof cpu.unpack_memory === 'function' ? (cpu as V86MemoryCopies) : null;
}
