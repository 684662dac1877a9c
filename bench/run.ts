// `npm run bench [-- NAME...]`: runs the benchmarks whose name starts with NAME (all by default)
// and prints one JSON object per line.
import { benchAgent } from './agent.ts';
import { benchApp } from './app.ts';
import { benchAppMemory } from './app-memory.ts';
import { benchCanvas } from './canvas.ts';
import { benchCheckpoint } from './checkpoint.ts';
import { benchFirstShell } from './first-shell.ts';
import { benchMemory } from './memory.ts';
import { benchNet } from './net.ts';
import { benchOcr } from './ocr.ts';
import { benchProxy } from './proxy.ts';
import { benchStackFile } from './stack-file.ts';
import { benchVm } from './vm.ts';
import { benchWorkspace } from './workspace.ts';

const BENCHES: Record<string, () => Promise<void>> = {
  'proxy.overhead': benchProxy,
  'app.offline_reload_interactive': benchApp,
  'app.renderer_memory_mb': benchAppMemory,
  'memory.search_100k': benchMemory,
  'agent.overhead_per_tool_call': benchAgent,
  'canvas.pan_frame_200': benchCanvas,
  'ocr.page': benchOcr,
  'vm.cold_boot': benchVm,
  'vm.first_shell': benchFirstShell,
  'net.download_10mb': benchNet,
  'stack.file': benchStackFile,
  'stack.workspace_200mb': benchWorkspace,
  checkpoint: benchCheckpoint,
};

// Names come after `--` from npm, or as plain arguments.
const filters = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const chosen = Object.entries(BENCHES).filter(([name]) => filters.length === 0 || filters.some((f) => name.startsWith(f)));
if (chosen.length === 0) {
  console.error(`No benchmark matches ${filters.join(', ')}. Known: ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
let failed = false;
for (const [name, run] of chosen) {
  try {
    await run();
  } catch (error) {
    failed = true;
    console.error(`${name} failed: ${error instanceof Error ? error.stack : error}`);
  }
}
process.exit(failed ? 1 : 0);
