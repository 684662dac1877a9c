// Every request a stack answers, one capability's handlers from each module beside this one: a
// method without a handler is a type error.
import type { Method } from '../../protocol/stack-api.ts';
import type { Checkpoints } from '../checkpoints/checkpoints.ts';
import type { Skills } from '../skills.ts';
import type { Trust } from '../trust.ts';
import { canvasHandlers } from './canvas.ts';
import { checkpointHandlers } from './checkpoints.ts';
import { computerHandlers } from './computer.ts';
import type { Handlers, StackContext } from './context.ts';
import { documentHandlers } from './documents.ts';
import { missionHandlers } from './missions.ts';
import { ruleHandlers } from './rules.ts';
import { settingsHandlers } from './settings.ts';
import { skillHandlers } from './skills.ts';
import { taskHandlers } from './tasks.ts';
import { trustHandlers } from './trust.ts';

export function stackHandlers(
  context: StackContext,
  parts: { trust: Trust; skills: Skills; checkpoints: Checkpoints | null },
  close: Handlers<'close'>['close'],
): Handlers<Method> {
  const { trust, skills } = parts;
  const settingsRequests = settingsHandlers(context);
  return {
    ...missionHandlers(context),
    ...settingsRequests,
    ...trustHandlers(context, trust, (patch) => settingsRequests.update_settings(patch, context.newId('trust'))),
    ...canvasHandlers(context),
    ...ruleHandlers(context),
    ...documentHandlers(context),
    ...computerHandlers(context),
    // A skill the owner installs under the name of one a stack from elsewhere brought is theirs.
    ...skillHandlers({
      ...skills,
      async install(files, dryRun) {
        const skill = await skills.install(files, dryRun);
        if (!dryRun) await trust.release(`skill:${skill.name}`);
        return skill;
      },
    }),
    ...taskHandlers(context.tasks),
    ...checkpointHandlers(parts.checkpoints),
    // Makes the stack's files still for a copy: the last thing this worker does.
    close,
  };
}
