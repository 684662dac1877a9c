import { describe, expect, it } from 'vitest';
import { findViolations, type SourceFile } from './import-rules.ts';
import { sources } from './sources.ts';

describe('dependency direction', () => {
  it('holds for the whole tree', () => {
    const files = ['app', 'protocol', 'storage', 'worker', 'vm', 'memory', 'cloudflare-proxy/src'].flatMap(sources);
    expect(files.length).toBeGreaterThan(10);
    expect(findViolations(files)).toEqual([]);
  });

  it('catches each kind of violation', () => {
    const bad: SourceFile[] = [
      { path: 'worker/a.ts', source: "import { h } from 'preact';\nimport { useStore } from 'zustand';" },
      { path: 'worker/b.ts', source: "import { App } from '../app/App.tsx';" },
      { path: 'worker/c.ts', source: 'const el = document.createElement("div");' },
      { path: 'worker/d.tsx', source: 'export const x = 1;' },
      { path: 'vm/e.ts', source: "import { x } from '../memory/db.ts';" },
      { path: 'memory/f.ts', source: "export { y } from '../worker/stack.ts';" },
      { path: 'app/g.ts', source: "import { createStack } from '../worker/stack.ts';" },
      { path: 'app/h.ts', source: "const m = await import('../vm/machine.ts');" },
      { path: 'cloudflare-proxy/src/i.ts', source: "import type { Settings } from '../../protocol/settings.ts';" },
      { path: 'protocol/j.ts', source: "import type { StackDeps } from '../worker/stack.ts';\nimport { z } from 'zod';" },
      { path: 'storage/k.ts', source: "import { isStorageFull } from '../worker/storage-full.ts';\nimport type { Disk } from '../vm/disk.ts';\nimport { x } from '../memory/index.ts';" },
      { path: 'storage/l.ts', source: "import { formatBytes } from '../protocol/wording.ts';\nconst w = window.name;" },
      { path: 'app/m.ts', source: "import { fileAt } from '../storage/opfs.ts';" },
    ];
    const problems = findViolations(bad);
    expect(problems).toEqual([
      'worker/a.ts:1 worker/ must not import preact',
      'worker/a.ts:2 worker/ must not import zustand',
      'worker/b.ts:1 worker/ must not import app/',
      'worker/c.ts:1 uses the DOM-only global document',
      'worker/d.tsx:1 JSX belongs in app/',
      'vm/e.ts:1 vm/ must not import memory/',
      'memory/f.ts:1 memory/ must not import worker/',
      'app/g.ts:1 app/ may import only types from worker/ (use `import type`): ../worker/stack.ts',
      'app/h.ts:1 app/ must not import vm/ (go through the stack worker)',
      'cloudflare-proxy/src/i.ts:1 cloudflare-proxy/ is its own package and must not import protocol/',
      'protocol/j.ts:1 protocol/ imports nothing but itself: ../worker/stack.ts',
      'protocol/j.ts:2 protocol/ may take only types from a package: zod',
      'storage/k.ts:1 storage/ is the layer under worker/, vm/ and memory/ and must not import worker/',
      'storage/k.ts:2 storage/ is the layer under worker/, vm/ and memory/ and must not import vm/',
      'storage/k.ts:3 storage/ is the layer under worker/, vm/ and memory/ and must not import memory/',
      'storage/l.ts:2 uses the DOM-only global window',
      'storage/l.ts:1 storage/ may take only types from protocol/: ../protocol/wording.ts',
      'app/m.ts:1 app/ must not import storage/ (go through the stack worker)',
    ]);
  });

  it('allows type imports from worker/ and values from protocol/ in app/, and storage/ under worker/, vm/ and memory/', () => {
    const ok: SourceFile[] = [
      { path: 'app/a.ts', source: "import type { StackApi } from '../protocol/stack-api.ts';\nimport { type Settings } from '../worker/settings.ts';" },
      { path: 'app/b.ts', source: "import { assertNever } from '../protocol/errors.ts';" },
      { path: 'vm/c.ts', source: "import type { ComputerStatus } from '../protocol/computer.ts';" },
      { path: 'worker/c.ts', source: "import type { Disk } from '../vm/disk.ts';\nconst win = { id: 1 };" },
      { path: 'worker/d.ts', source: "import { fileAt } from '../storage/opfs.ts';" },
      { path: 'vm/e.ts', source: "import { writeWholeFile } from '../storage/atomic-write.ts';" },
      { path: 'memory/f.ts', source: "import { replaceFile } from '../storage/atomic-write.ts';" },
      { path: 'storage/g.ts', source: "import type { ErrorShape } from '../protocol/errors.ts';\nimport { entriesOf } from './opfs.ts';" },
    ];
    expect(findViolations(ok)).toEqual([]);
  });
});
