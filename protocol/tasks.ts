// Scheduled tasks and their runs.

/** When a task runs: once at a time (ISO 8601 or epoch ms), by a cron expression in a time zone (the user's when absent), or when idle. */
export type TaskScheduleInput = { kind: 'once'; at: string | number } | { kind: 'cron'; cron: string; timezone?: string } | { kind: 'backlog' };

export interface TaskRunInfo {
  id: number;
  due_at: number;
  missed: boolean;
  status: 'running' | 'succeeded' | 'failed' | 'stopped';
  /** Tries so far (a failed try is retried with backoff, three in all). */
  attempts: number;
  mission_ids: string[];
  error: string | null;
  started_at: number;
  finished_at: number | null;
}

export interface TaskInfo {
  id: string;
  title: string;
  prompt: string;
  kind: 'once' | 'cron' | 'backlog';
  at: number | null;
  cron: string | null;
  timezone: string | null;
  /** The schedule in words. */
  schedule: string;
  /** done: a one-off (or backlog item) that ran; failed: one whose last run failed. */
  status: 'active' | 'paused' | 'done' | 'failed';
  next_run_at: number | null;
  created_by: 'agent' | 'user';
  created_at: number;
  /** A run is going on (or waiting to retry). */
  running: boolean;
  /** The latest runs, newest first. */
  runs: TaskRunInfo[];
}
