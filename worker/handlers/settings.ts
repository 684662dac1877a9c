// Settings: the model endpoint and its key, the heartbeat, OCR, the computer's network; pairing
// this browser with the proxy.
import { PairingError, pairDevice } from '../device.ts';
import { HEARTBEAT_FILE } from '../heartbeat.ts';
import { DEFAULT_ENDPOINTS, loadApiKey, mergeSettings, saveApiKey, saveSettings } from '../settings.ts';
import type { Handlers, StackContext } from './context.ts';
import { RequestError } from '../request-error.ts';

/** A checklist is a few lines; a long one would crowd every beat's prompt. */
const MAX_CHECKLIST_CHARS = 20_000;

export function settingsHandlers(ctx: StackContext): Handlers<'get_settings' | 'update_settings' | 'check_model' | 'pair_device' | 'unpair_device' | 'get_heartbeat_checklist' | 'save_heartbeat_checklist'> {
  const { deps, emit, credentials, checkModel, heartbeat } = ctx;
  return {
    async get_settings() {
      return ctx.settings;
    },

    async update_settings(params) {
      const patch = params ?? {};
      const next = mergeSettings(ctx.settings, patch);
      // Switching provider without naming an endpoint moves to that provider's usual one.
      if (patch.provider && patch.provider !== ctx.settings.provider && patch.endpoint === undefined) {
        next.endpoint = patch.provider === 'proxy' ? deps.defaults.endpoint : DEFAULT_ENDPOINTS[patch.provider];
      }
      if (patch.api_key !== undefined) {
        await saveApiKey(deps.storage, patch.api_key);
        next.has_api_key = (await loadApiKey(deps.storage)) !== null;
      }
      const previous = ctx.settings;
      const endpointChanged = next.endpoint !== ctx.settings.endpoint || next.provider !== ctx.settings.provider || patch.api_key !== undefined;
      ctx.settings = next;
      await saveSettings(deps.storage, ctx.settings);
      emit({ type: 'settings_changed', settings: ctx.settings });
      if (endpointChanged) void checkModel();
      // Turned off or on: the running computer follows at once (a new endpoint follows its check).
      else if (next.computer_network !== previous.computer_network) void ctx.computer?.networkChanged().catch((error: unknown) => console.warn('the computer could not take its new network', error));
      heartbeat.schedule();
      return ctx.settings;
    },

    async check_model() {
      return checkModel();
    },

    async pair_device(params) {
      if (ctx.settings.provider !== 'proxy') throw new RequestError({ code: 'bad_request', message: 'Pairing is for the Stackdocs proxy: choose it in Settings first.' });
      const code = typeof params?.code === 'string' ? params.code.trim() : '';
      if (!code) throw new RequestError({ code: 'bad_request', message: 'Enter the pairing code the proxy\'s owner gave you (`npm run pair` prints one).' });
      const endpoint = ctx.settings.endpoint;
      try {
        await credentials.set(endpoint, await pairDevice(endpoint, code, deps.deviceLabel ?? 'Stackdocs', deps.fetch));
      } catch (error) {
        if (error instanceof PairingError) throw new RequestError({ code: 'bad_request', message: error.message });
        throw error;
      }
      return checkModel();
    },

    async get_heartbeat_checklist() {
      return { text: (await deps.memory.stackFiles.readText(HEARTBEAT_FILE)) ?? '' };
    },

    async save_heartbeat_checklist(params) {
      if (typeof params?.text !== 'string') throw new RequestError({ code: 'bad_request', message: 'The checklist is saved as its text.' });
      if (params.text.length > MAX_CHECKLIST_CHARS) {
        throw new RequestError({ code: 'bad_request', message: `The checklist is ${params.text.length.toLocaleString('en')} characters; keep it under ${MAX_CHECKLIST_CHARS.toLocaleString('en')} (every beat sends it to the model).` });
      }
      await deps.memory.stackFiles.writeText(HEARTBEAT_FILE, params.text);
      return { text: params.text };
    },

    async unpair_device() {
      await credentials.set(ctx.settings.endpoint, null);
      return checkModel();
    },
  };
}
