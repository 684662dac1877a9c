// The public surface of memory/: what the stack worker imports. Node-only helpers (node-sqlite.ts,
// bench.ts) are imported by path from tests and benchmarks, never from here.
export { bootstrapStack, readLayoutVersion, LayoutTooNewError, type BootstrapReport } from './bootstrap.ts';
export { openDatabase, CONNECTION_PRAGMAS, type Database, type Queryable, type Row, type RunResult, type SqlValue } from './database.ts';
export * from './db-errors.ts';
export { DocumentsStore, type DocumentPatch, type DocumentRecord, type ExtractionRecord, type NewDocument } from './documents-store.ts';
export { queryTerms, toFtsQuery } from './fts-query.ts';
export {
  createMemoryHooks,
  DEFAULT_BATCH_EVERY,
  type FlushResult,
  type HookError,
  type HookResult,
  type MemoryHooks,
  type StopResult,
} from './hooks.ts';
export { LAYOUT_VERSION, opfsDatabasePath, opfsSnapshotPath, STACK_DIRECTORIES, STACK_LAYOUT } from './layout.ts';
export { formatMemoryFile, loadMemoryPrompt, type MemoryPrompt } from './loader.ts';
export { countLines, MEMORY_FILES, type MemoryFileName, type MemoryFileSpec } from './memory-files.ts';
export * from './memory-schema.ts';
export { MemoryStore, type Learning, type NewLearning, type PendingAction, type ProcessorRun } from './memory-store.ts';
export { migrate, userVersion, type Migration, type MigrationReport } from './migrations.ts';
export { openOpfsStackFiles } from './opfs-files.ts';
export { openStackDatabases, type DatabasePaths, type StackDatabases } from './open-databases.ts';
export {
  createObservationProcessor,
  DEFAULT_PROCESSOR_MODEL,
  type BatchOutcome,
  type CompleteFn,
  type CompletionRequest,
  type FlushOutcome,
  type ObservationProcessor,
} from './processor.ts';
export { parseProcessorReply, type ParsedReply } from './processor-reply.ts';
export { searchMemory, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, type MemorySearchResult } from './search.ts';
export { loadSqlite, type LoadSqliteOptions, type SqliteRuntime, type VfsKind } from './sqlite-runtime.ts';
export { createInMemoryStackFiles, memoryFilesOf, type MemoryFiles, type StackFiles } from './stack-files.ts';
export { openOpfsStackMemory, openStackMemory, type StackMemory } from './stack-memory.ts';
export { MEMORY_TEMPLATES } from './templates.ts';
export { TasksStore, type TaskRecord, type TaskRunRecord } from './tasks-store.ts';
export { TranscriptStore, type LoggedEvent, type NewObservation, type Observation, type SessionRecord, type ToolCallSummary } from './transcript-store.ts';
export { OBSERVATION_LIMITS, truncateText } from './truncate.ts';
export { TurnBuffer, type ToolCallInput } from './turn-buffer.ts';
