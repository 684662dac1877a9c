// Scheduled tasks, from the Tasks window: the list, pause and resume, edit, run now, delete.
// A task the scheduler refuses (a bad schedule, an unknown id) says why: TaskError is a RequestError.
import type { Scheduler } from '../tasks.ts';
import type { Handlers } from './context.ts';

export function taskHandlers(tasks: Scheduler): Handlers<'list_tasks' | 'update_task' | 'run_task' | 'delete_task'> {
  return {
    list_tasks: () => tasks.list(),
    async update_task(params) {
      const { task_id, title, prompt, schedule, paused } = params ?? ({} as typeof params);
      return tasks.update(String(task_id), {
        ...(title !== undefined ? { title } : {}),
        ...(prompt !== undefined ? { prompt } : {}),
        ...(schedule !== undefined ? { schedule } : {}),
        ...(typeof paused === 'boolean' ? { paused } : {}),
      });
    },
    run_task: (params) => tasks.runNow(String(params?.task_id)),
    async delete_task(params) {
      await tasks.remove(String(params?.task_id));
      return {};
    },
  };
}
