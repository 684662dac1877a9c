// wa-sqlite in Node (unit tests, benchmarks): the web build cannot fetch its wasm from a file
// URL there, so the bytes are read from the package and handed to the module factory.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadSqlite, type SqliteRuntime } from './sqlite-runtime.ts';

let shared: Promise<SqliteRuntime> | undefined;

/** One runtime per process, with the in-memory VFS registered as "memory". */
export function loadNodeSqlite(): Promise<SqliteRuntime> {
  shared ??= (async () => {
    const wasmPath = createRequire(import.meta.url).resolve('@journeyapps/wa-sqlite/dist/wa-sqlite.wasm');
    const runtime = await loadSqlite({ wasmBinary: await readFile(wasmPath) });
    await runtime.registerVfs('memory');
    return runtime;
  })();
  return shared;
}

let counter = 0;

/** A path no other caller in this process has used: a fresh, empty database file. */
export function uniqueDbPath(name: string): string {
  counter += 1;
  return `/node-${process.pid}-${counter}/${name}`;
}
