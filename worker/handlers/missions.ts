// Missions: the user's messages, a heartbeat now, the recorded demo, and stopping them (or one subagent).
import { DEMO_REQUEST } from '../demo/demo.ts';
import { SAMPLE_DOCUMENTS } from '../../protocol/documents.ts';
import type { Handlers, StackContext } from './context.ts';
import { RequestError } from '../request-error.ts';

export function missionHandlers(ctx: StackContext): Handlers<'mission' | 'heartbeat' | 'play_demo' | 'abort' | 'cancel_subagent'> {
  const { deps, missions, checkModel, heartbeat, subagents } = ctx;
  return {
    async mission(params, id) {
      const text = typeof params?.text === 'string' ? params.text.trim() : '';
      if (!text) throw new RequestError({ code: 'bad_request', message: 'A mission needs some text.' });
      return { mission_id: missions.start(id, text) };
    },

    async heartbeat(_params, id) {
      return { mission_id: missions.start(id, await heartbeat.prompt(), 'heartbeat') };
    },

    async play_demo(_params, id) {
      if (missions.active > 0) throw new RequestError({ code: 'busy', message: 'Wait for the running request to finish (or stop it), then play the demo.' });
      // Never mixed with a model: with one connected, the user asks it instead.
      if ((await checkModel()).state === 'ready') {
        throw new RequestError({ code: 'demo_unavailable', message: 'A model is connected, so the recorded demo does not play: ask the model yourself, e.g. "Extract these invoices into a table".' });
      }
      const documents = await deps.memory.documents.listDocuments(1000);
      const missing = SAMPLE_DOCUMENTS.filter((name) => !documents.some((doc) => doc.path === `documents/${name}`));
      if (missing.length > 0) {
        throw new RequestError({ code: 'bad_request', message: `The recorded demo reads the sample documents, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in this stack. Add them with "Try it with sample documents".` });
      }
      return { mission_id: missions.start(id, DEMO_REQUEST, 'demo') };
    },

    async abort(params) {
      return { aborted: missions.abort(params?.mission_id) };
    },

    async cancel_subagent(params) {
      if (typeof params?.subagent_id !== 'string') throw new RequestError({ code: 'bad_request', message: 'Name the subagent to cancel (subagent_id).' });
      return { cancelled: subagents.cancel(params.subagent_id) };
    },
  };
}
