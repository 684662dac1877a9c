// The computer: start, suspend, reboot, reset, save, download its image; its network this session.
import type { Handlers, StackContext } from './context.ts';
import { RequestError } from '../request-error.ts';

export function computerHandlers(ctx: StackContext): Handlers<'computer' | 'computer_network'> {
  const { computer } = ctx;
  return {
    async computer(params) {
      const action = params?.action;
      if (!['start', 'suspend', 'reboot', 'reset', 'save', 'download', 'rest'].includes(action)) {
        throw new RequestError({ code: 'bad_request', message: 'The action must be start, suspend, reboot, reset, save, download or rest.' });
      }
      if (!computer) return { state: 'unavailable', message: 'This stack has no computer.' };
      // The agent at work may use the computer at any moment: it stays up.
      if (action === 'rest' && ctx.missions.active > 0) return computer.status;
      return (await computer.control(action));
    },

    async computer_network() {
      if (!computer) return { sent_bytes: 0, received_bytes: 0, online: null };
      const use = await computer.networkUse();
      return { sent_bytes: use.sent, received_bytes: use.received, online: use.online };
    },
  };
}
