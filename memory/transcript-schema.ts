// transcript.db: the immutable record of what happened. Sessions, one observation per turn, and
// the persisted event log a UI resumes from. Triggers keep the record append-only.
import type { Migration } from './migrations.ts';

export const TRANSCRIPT_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, observations, events',
    sql: `
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        message_count INTEGER NOT NULL DEFAULT 0,
        observation_count INTEGER NOT NULL DEFAULT 0
      ) STRICT;

      CREATE TRIGGER sessions_keep BEFORE DELETE ON sessions
      BEGIN SELECT RAISE(ABORT, 'sessions are append-only'); END;

      -- One row per agent turn. Only "processed" may ever change, and only from 0 to 1.
      CREATE TABLE observations (
        id INTEGER PRIMARY KEY,
        timestamp INTEGER NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        sequence_num INTEGER NOT NULL,
        user_message TEXT NOT NULL DEFAULT '',
        tool_calls_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tool_calls_json)),
        agent_response TEXT NOT NULL DEFAULT '',
        processed INTEGER NOT NULL DEFAULT 0 CHECK (processed IN (0, 1)),
        UNIQUE (session_id, sequence_num)
      ) STRICT;

      CREATE INDEX observations_unprocessed ON observations(id) WHERE processed = 0;

      CREATE TRIGGER observations_append_only BEFORE UPDATE ON observations
      WHEN NEW.id IS NOT OLD.id OR NEW.timestamp IS NOT OLD.timestamp
        OR NEW.session_id IS NOT OLD.session_id OR NEW.sequence_num IS NOT OLD.sequence_num
        OR NEW.user_message IS NOT OLD.user_message OR NEW.tool_calls_json IS NOT OLD.tool_calls_json
        OR NEW.agent_response IS NOT OLD.agent_response OR NEW.processed < OLD.processed
      BEGIN SELECT RAISE(ABORT, 'observations are append-only: only processed may change, from 0 to 1'); END;

      CREATE TRIGGER observations_keep BEFORE DELETE ON observations
      BEGIN SELECT RAISE(ABORT, 'observations are append-only'); END;

      -- The stack's event stream, each event under the seq the UI saw it with.
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        type TEXT NOT NULL,
        json TEXT NOT NULL CHECK (json_valid(json)),
        at INTEGER NOT NULL
      ) STRICT;

      CREATE TRIGGER events_append_only BEFORE UPDATE ON events
      BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
    `,
  },
];
