// memory.db: what the stack has learned (learnings + FTS5 index, pending actions, the batch
// processor's run log) and the document pipeline's records (documents, extractions).
import type { Migration } from './migrations.ts';

export const LEARNING_TYPES = ['fact', 'pattern', 'correction', 'preference', 'tool_install'] as const;
export type LearningType = (typeof LEARNING_TYPES)[number];

export const ACTION_PRIORITIES = ['high', 'normal', 'low'] as const;
export type ActionPriority = (typeof ACTION_PRIORITIES)[number];
export type ActionStatus = 'pending' | 'done' | 'dismissed';

/**
 * Whose words a learning or action carries: the user's own messages, or content the assistant
 * read or wrote (documents, web pages, tool output, its own answers). Null on rows learned
 * before sources were recorded.
 */
export const LEARNING_SOURCES = ['user', 'content'] as const;
export type LearningSource = (typeof LEARNING_SOURCES)[number];

export const DOCUMENT_STATUSES = ['uploaded', 'processing', 'ready', 'failed'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

export const EXTRACTION_STATUSES = ['pending', 'complete', 'corrected', 'failed'] as const;
export type ExtractionStatus = (typeof EXTRACTION_STATUSES)[number];

/** once: at a time; cron: a cron expression in a time zone; backlog: whenever the stack is idle. */
export const TASK_KINDS = ['once', 'cron', 'backlog'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];
/** done: a one-off that ran; failed: a one-off whose last try failed. */
export const TASK_STATUSES = ['active', 'paused', 'done', 'failed'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TASK_RUN_STATUSES = ['running', 'succeeded', 'failed', 'stopped'] as const;
export type TaskRunStatus = (typeof TASK_RUN_STATUSES)[number];

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

export const MEMORY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'learnings, learnings_fts, pending_actions, processor_runs',
    sql: `
      CREATE TABLE learnings (
        id INTEGER PRIMARY KEY,
        created_at INTEGER NOT NULL,
        session_id TEXT,
        type TEXT NOT NULL CHECK (type IN (${list(LEARNING_TYPES)})),
        content TEXT NOT NULL CHECK (length(content) > 0),
        source_observation_id INTEGER,
        confidence REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1))
      ) STRICT;

      -- A learning seen again (a retried batch, a repeated fact) is not stored twice.
      CREATE UNIQUE INDEX learnings_unique ON learnings(type, content);
      CREATE INDEX learnings_recent ON learnings(created_at);

      -- External-content FTS5 index over learnings, kept in step by the triggers below.
      CREATE VIRTUAL TABLE learnings_fts USING fts5(
        content, type,
        content = 'learnings', content_rowid = 'id',
        tokenize = 'unicode61 remove_diacritics 2'
      );

      -- ORDER BY rank is bm25 with a word in the content worth four in the type.
      INSERT INTO learnings_fts(learnings_fts, rank) VALUES ('rank', 'bm25(1.0, 0.25)');

      CREATE TRIGGER learnings_fts_insert AFTER INSERT ON learnings BEGIN
        INSERT INTO learnings_fts(rowid, content, type) VALUES (NEW.id, NEW.content, NEW.type);
      END;
      CREATE TRIGGER learnings_fts_delete AFTER DELETE ON learnings BEGIN
        INSERT INTO learnings_fts(learnings_fts, rowid, content, type) VALUES ('delete', OLD.id, OLD.content, OLD.type);
      END;
      CREATE TRIGGER learnings_fts_update AFTER UPDATE ON learnings BEGIN
        INSERT INTO learnings_fts(learnings_fts, rowid, content, type) VALUES ('delete', OLD.id, OLD.content, OLD.type);
        INSERT INTO learnings_fts(rowid, content, type) VALUES (NEW.id, NEW.content, NEW.type);
      END;

      CREATE TABLE pending_actions (
        id INTEGER PRIMARY KEY,
        created_at INTEGER NOT NULL,
        content TEXT NOT NULL CHECK (length(content) > 0),
        priority TEXT NOT NULL DEFAULT 'normal' CHECK (priority IN (${list(ACTION_PRIORITIES)})),
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'dismissed')),
        source_learning_id INTEGER REFERENCES learnings(id) ON DELETE SET NULL,
        resolved_at INTEGER
      ) STRICT;

      CREATE INDEX pending_actions_open ON pending_actions(status, created_at);

      -- One row per batch the processor attempted: successes say which observations they covered
      -- (so a crash before marking them processed is repaired, not re-learned); failures keep
      -- the reason, which the next attempt shows the model.
      CREATE TABLE processor_runs (
        id INTEGER PRIMARY KEY,
        started_at INTEGER NOT NULL,
        finished_at INTEGER NOT NULL,
        model TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        failure TEXT CHECK (failure IN ('model_error', 'malformed_reply', 'storage_error')),
        error TEXT,
        observation_ids TEXT NOT NULL CHECK (json_valid(observation_ids)),
        first_observation_id INTEGER,
        last_observation_id INTEGER,
        learnings_added INTEGER NOT NULL DEFAULT 0,
        actions_added INTEGER NOT NULL DEFAULT 0,
        files_updated TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(files_updated))
      ) STRICT;

      CREATE INDEX processor_runs_last ON processor_runs(status, last_observation_id);
    `,
  },
  {
    version: 2,
    name: 'documents, extractions',
    sql: `
      CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        filename TEXT NOT NULL,
        path TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL CHECK (size >= 0),
        mime TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'uploaded' CHECK (status IN (${list(DOCUMENT_STATUSES)})),
        description TEXT NOT NULL DEFAULT '',
        page_count INTEGER CHECK (page_count IS NULL OR page_count >= 0),
        error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE extractions (
        id INTEGER PRIMARY KEY,
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        fields TEXT NOT NULL CHECK (json_valid(fields)),
        confidence TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(confidence)),
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN (${list(EXTRACTION_STATUSES)})),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;

      CREATE INDEX extractions_document ON extractions(document_id, id);
    `,
  },
  {
    version: 3,
    name: 'learnings and actions remember whose words they carry',
    sql: `
      ALTER TABLE learnings ADD COLUMN source TEXT CHECK (source IS NULL OR source IN (${list(LEARNING_SOURCES)}));
      ALTER TABLE learnings ADD COLUMN source_label TEXT;
      ALTER TABLE pending_actions ADD COLUMN source TEXT CHECK (source IS NULL OR source IN (${list(LEARNING_SOURCES)}));
      ALTER TABLE pending_actions ADD COLUMN source_label TEXT;
    `,
  },
  {
    version: 4,
    name: 'scheduled tasks and their runs',
    sql: `
      CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        prompt TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN (${list(TASK_KINDS)})),
        at INTEGER,
        cron TEXT,
        timezone TEXT,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN (${list(TASK_STATUSES)})),
        next_run_at INTEGER,
        created_by TEXT NOT NULL CHECK (created_by IN ('agent', 'user')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        CHECK (kind != 'once' OR at IS NOT NULL),
        CHECK (kind != 'cron' OR (cron IS NOT NULL AND timezone IS NOT NULL))
      ) STRICT;

      CREATE TABLE task_runs (
        id INTEGER PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        due_at INTEGER NOT NULL,
        missed INTEGER NOT NULL DEFAULT 0 CHECK (missed IN (0, 1)),
        status TEXT NOT NULL DEFAULT 'running' CHECK (status IN (${list(TASK_RUN_STATUSES)})),
        attempts INTEGER NOT NULL DEFAULT 0,
        mission_ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(mission_ids)),
        error TEXT,
        started_at INTEGER NOT NULL,
        finished_at INTEGER
      ) STRICT;

      CREATE INDEX task_runs_task ON task_runs(task_id, id);
    `,
  },
];
