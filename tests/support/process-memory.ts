// The memory of the Chromium that browser tests run in, read from /proc (Linux): what work costs
// the browser's processes, which no page API reports (a page sees its own JS heap, not the
// buffers behind it). A vitest browser command (vitest.config.ts) hands it to the test.
import { readdirSync, readFileSync } from 'node:fs';

/** Resident MB of every Chromium renderer under this process (the test's tab among them); 0 off Linux. */
export function rendererMemoryMb(): number {
  let names: string[];
  try {
    names = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  const parents = new Map<number, number>();
  for (const name of names) {
    try {
      // "pid (comm) state ppid …": comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  const under = (pid: number) => {
    for (let at = parents.get(pid), depth = 0; at !== undefined && depth < 20; at = parents.get(at), depth++) if (at === process.pid) return true;
    return false;
  };
  let kb = 0;
  for (const [pid] of parents) {
    if (!under(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      kb += Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the process ended meanwhile
    }
  }
  return kb / 1024;
}
