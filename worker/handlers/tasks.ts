// Scheduled tasks, from the Tasks window: the list, pause and resume, edit, run now, delete.
import { TaskError, type Scheduler } from '../tasks.ts';
import { RequestError, type Handlers } from './context.ts';

export function taskHandlers(tasks: Scheduler): Handlers<'list_tasks' | 'update_task' | 'run_task' | 'delete_task'> {
  const refusal = (error: unknown): never => {
    if (error instanceof TaskError) throw new RequestError({ code: 'bad_request', message: error.message });
    throw error;
  };
  return {
    list_tasks: () => tasks.list(),
    async update_task(params) {
      const { task_id, title, prompt, schedule, paused } = params ?? ({} as typeof params);
      return tasks
        .update(String(task_id), {
          ...(title !== undefined ? { title } : {}),
          ...(prompt !== undefined ? { prompt } : {}),
          ...(schedule !== undefined ? { schedule } : {}),
          ...(typeof paused === 'boolean' ? { paused } : {}),
        })
        .catch(refusal);
    },
    run_task: (params) => tasks.runNow(String(params?.task_id)).catch(refusal),
    async delete_task(params) {
      await tasks.remove(String(params?.task_id)).catch(refusal);
      return {};
    },
  };
}
