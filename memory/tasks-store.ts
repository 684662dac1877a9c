// memory.db access for scheduled tasks: what each task asks, when it runs next, and one row per
// run (a due time, its tries and the missions they were). In the stack's database, so tasks travel
// with an exported stack.
import type { Database } from './database.ts';
import type { TaskKind, TaskRunStatus, TaskStatus } from './memory-schema.ts';

export interface TaskRecord {
  id: string;
  title: string;
  prompt: string;
  kind: TaskKind;
  /** once: when (epoch ms). */
  at: number | null;
  /** cron: the expression and the IANA time zone it is read in. */
  cron: string | null;
  timezone: string | null;
  status: TaskStatus;
  /** Null for backlog tasks and for tasks that will not run again. */
  nextRunAt: number | null;
  createdBy: 'agent' | 'user';
  createdAt: number;
  updatedAt: number;
}

export interface TaskRunRecord {
  id: number;
  taskId: string;
  dueAt: number;
  /** The due time passed while the app was closed; this run came when it opened. */
  missed: boolean;
  status: TaskRunStatus;
  attempts: number;
  missionIds: string[];
  error: string | null;
  startedAt: number;
  finishedAt: number | null;
}

export type NewTask = Pick<TaskRecord, 'id' | 'title' | 'prompt' | 'kind' | 'at' | 'cron' | 'timezone' | 'nextRunAt' | 'createdBy'>;
export type TaskPatch = Partial<Pick<TaskRecord, 'title' | 'prompt' | 'kind' | 'at' | 'cron' | 'timezone' | 'status' | 'nextRunAt'>>;

const TASK_COLUMNS = `id, title, prompt, kind, at, cron, timezone, status, next_run_at AS nextRunAt, created_by AS createdBy,
  created_at AS createdAt, updated_at AS updatedAt`;
const PATCH_COLUMNS: Record<keyof TaskPatch, string> = {
  title: 'title',
  prompt: 'prompt',
  kind: 'kind',
  at: 'at',
  cron: 'cron',
  timezone: 'timezone',
  status: 'status',
  nextRunAt: 'next_run_at',
};

interface RunRow {
  id: number;
  task_id: string;
  due_at: number;
  missed: number;
  status: TaskRunStatus;
  attempts: number;
  mission_ids: string;
  error: string | null;
  started_at: number;
  finished_at: number | null;
}

const toRun = (row: RunRow): TaskRunRecord => ({
  id: row.id,
  taskId: row.task_id,
  dueAt: row.due_at,
  missed: row.missed === 1,
  status: row.status,
  attempts: row.attempts,
  missionIds: JSON.parse(row.mission_ids) as string[],
  error: row.error,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
});

export class TasksStore {
  constructor(
    readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  async add(task: NewTask): Promise<TaskRecord> {
    const at = this.now();
    await this.db.run(
      `INSERT INTO tasks (id, title, prompt, kind, at, cron, timezone, next_run_at, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [task.id, task.title, task.prompt, task.kind, task.at, task.cron, task.timezone, task.nextRunAt, task.createdBy, at, at],
    );
    return (await this.get(task.id))!;
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    return this.db.get<TaskRecord>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ?`, [id]);
  }

  /** Oldest first. */
  async list(): Promise<TaskRecord[]> {
    return this.db.all<TaskRecord>(`SELECT ${TASK_COLUMNS} FROM tasks ORDER BY created_at, id`);
  }

  async update(id: string, patch: TaskPatch): Promise<TaskRecord | undefined> {
    const keys = (Object.keys(patch) as (keyof TaskPatch)[]).filter((key) => key in PATCH_COLUMNS && patch[key] !== undefined);
    if (keys.length) {
      const sets = keys.map((key) => `${PATCH_COLUMNS[key]} = ?`).join(', ');
      await this.db.run(`UPDATE tasks SET ${sets}, updated_at = ? WHERE id = ?`, [...keys.map((key) => patch[key] ?? null), this.now(), id]);
    }
    return this.get(id);
  }

  /** Removes the task and (by cascade) its runs. */
  async remove(id: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM tasks WHERE id = ?', [id])).changes > 0;
  }

  async startRun(taskId: string, dueAt: number, missed: boolean): Promise<TaskRunRecord> {
    const { lastInsertRowid } = await this.db.run(`INSERT INTO task_runs (task_id, due_at, missed, started_at) VALUES (?, ?, ?, ?)`, [taskId, dueAt, missed ? 1 : 0, this.now()]);
    return (await this.getRun(lastInsertRowid))!;
  }

  /** One more try of a run, as the mission that carries it. */
  async addAttempt(runId: number, missionId: string): Promise<TaskRunRecord | undefined> {
    await this.db.run(`UPDATE task_runs SET attempts = attempts + 1, mission_ids = json_insert(mission_ids, '$[#]', ?) WHERE id = ?`, [missionId, runId]);
    return this.getRun(runId);
  }

  async finishRun(runId: number, status: Exclude<TaskRunStatus, 'running'>, error: string | null): Promise<TaskRunRecord | undefined> {
    await this.db.run('UPDATE task_runs SET status = ?, error = ?, finished_at = ? WHERE id = ?', [status, error, this.now(), runId]);
    return this.getRun(runId);
  }

  async getRun(id: number): Promise<TaskRunRecord | undefined> {
    const row = await this.db.get<RunRow>('SELECT * FROM task_runs WHERE id = ?', [id]);
    return row && toRun(row);
  }

  /** A task's latest runs, newest first. */
  async runs(taskId: string, limit = 10): Promise<TaskRunRecord[]> {
    return (await this.db.all<RunRow>('SELECT * FROM task_runs WHERE task_id = ? ORDER BY id DESC LIMIT ?', [taskId, limit])).map(toRun);
  }

  /** Runs left `running` by a page that went away: they did not finish. */
  async closeInterruptedRuns(): Promise<number> {
    return (await this.db.run(`UPDATE task_runs SET status = 'stopped', error = 'The page was closed while this ran.', finished_at = ? WHERE status = 'running'`, [this.now()])).changes;
  }
}
