// What the machine asks of the guest around a start and a save: its clock and a fresh random
// seed after every start, its disk synced before a save, whether the terminal runs a job.
import { AgentError, type AgentClient } from './agent-client.ts';
import { MachineError } from './machine-contract.ts';

const SYNC_AND_DROP = 'sync; echo 3 > /proc/sys/vm/drop_caches';

/**
 * Prints `busy` while a program started in the terminal runs, in the foreground or the
 * background, else `idle`: a process on ttyS0 (tty_nr 1088: major 4, minor 64) in a process group
 * of its own. The terminal's bash leads its session (busybox init starts it with setsid), and with
 * job control each command it runs gets a group of its own.
 */
export const TERMINAL_JOBS = 'for f in /proc/[0-9]*/stat; do read -r l < "$f" 2>/dev/null || continue; set -- ${l##*) }; if [ "$5" = 1088 ] && [ "$3" != "$4" ]; then echo busy; exit 0; fi; done; echo idle';

const SEED_BYTES = 64;
/** The agent's reseed (vm-images/agent/agent.py) in a python3 of its own: the seed on stdin. */
const RESEED_PY = [
  'import fcntl, os, struct, sys',
  'data = sys.stdin.buffer.read()',
  'fd = os.open("/dev/urandom", os.O_WRONLY)',
  'fcntl.ioctl(fd, 0x40085203, struct.pack("ii", len(data) * 8, len(data)) + data)',
  'fcntl.ioctl(fd, 0x5207)',
].join('\n');

/**
 * Sets the guest clock (it stands still while saved) and reseeds the guest kernel's random
 * generator with the host's bytes. Every wake of one saved state -- every user's first start wakes
 * the same image, a checkpoint can be restored twice -- would otherwise draw the same "random"
 * bytes: TLS secrets, keys, temporary names. An agent older than the seed, still running in a
 * stack's saved state, ignores it: the same reseed then runs in a python3 of its own.
 */
export async function setClockAndSeed(client: AgentClient): Promise<void> {
  const seed = crypto.getRandomValues(new Uint8Array(SEED_BYTES));
  const { reseeded } = await client.settime(Date.now(), 30_000, seed);
  if (reseeded) return;
  const result = await client.exec({ argv: ['python3', '-S', '-c', RESEED_PY], input: seed, timeout: 60 });
  if (result.code !== 0) throw new MachineError('boot_failed', `the computer's random generator could not be reseeded: ${result.stderr?.trim() ?? ''}`);
}

/**
 * The guest's disk synced and its caches dropped before a save, by the agent itself (one round
 * trip); an agent from an older image, still running in a stack's saved state, does it on a shell.
 */
export async function settle(client: AgentClient): Promise<void> {
  try {
    await client.settle(60_000);
  } catch (error) {
    if (error instanceof AgentError && error.code === 'settle_failed') return; // synced; the caches stay in the state
    if (!(error instanceof AgentError) || error.code !== 'unknown_type') throw error;
    await client.exec({ command: SYNC_AND_DROP, timeout: 60 });
  }
}
