// Settings: where model calls go (the proxy, the user's own key, or an OpenAI-compatible server),
// which model, the heartbeat, a token budget per mission, who reads scans, the computer's network, storage, and the permission rules.
import { TrustSection } from '../banners/TrustBanner.tsx';
import { useEffect, useRef, useState } from 'preact/hooks';
import { OCR_LANGUAGES, type OcrEngineChoice, type OcrLanguageChoice } from '../../protocol/documents.ts';
import type { Provider, Settings, SettingsPatch } from '../../protocol/settings.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { DevicePairing } from './DevicePairing.tsx';
import { useAppStore } from '../connection/store.ts';
import { ShortcutList } from '../keyboard/ShortcutsHelp.tsx';
import { HeartbeatChecklist } from './HeartbeatChecklist.tsx';
import { HooksSection } from './HooksSection.tsx';
import { McpSection } from './McpSection.tsx';
import { KioskSection } from '../kiosk/Kiosk.tsx';
import { currentStackId } from '../stacks/stacks.ts';
import { SkillsSection } from './SkillsSection.tsx';
import { MemorySection } from './MemorySection.tsx';
import { NetworkSection } from './NetworkSection.tsx';
import { StorageSection } from './StorageSection.tsx';
import { PermissionRules } from './PermissionRules.tsx';

const PROVIDERS: { value: Provider; label: string; hint: string }[] = [
  { value: 'proxy', label: 'Stackdocs proxy', hint: 'The proxy holds the API key. Your browser never sees it.' },
  { value: 'anthropic', label: 'Anthropic, with my own key', hint: 'Calls go straight from this browser to Anthropic.' },
  { value: 'openai', label: 'OpenAI-compatible server', hint: 'e.g. a local model server, for working fully offline.' },
];

const OCR_ENGINES: { value: OcrEngineChoice; label: string }[] = [
  { value: 'local', label: 'This browser (offline)' },
  { value: 'mistral', label: 'Mistral OCR, through the proxy' },
];

/** What the form holds while the user edits it; Save sends it all at once. */
interface SettingsForm {
  provider: Provider;
  endpoint: string;
  model: string;
  /** Empty: the saved key (if any) stays. */
  apiKey: string;
  heartbeat: string;
  quiet: { from: string; to: string };
  budget: string;
  ocrEngine: OcrEngineChoice;
  ocrLanguage: OcrLanguageChoice;
}

const EMPTY_FORM: SettingsForm = {
  provider: 'proxy',
  endpoint: '',
  model: '',
  apiKey: '',
  heartbeat: '0',
  quiet: { from: '', to: '' },
  budget: '',
  ocrEngine: 'local',
  ocrLanguage: 'auto',
};

function formOf(settings: Settings): SettingsForm {
  return {
    provider: settings.provider,
    endpoint: settings.endpoint,
    model: settings.model,
    apiKey: '',
    heartbeat: String(settings.heartbeat_minutes),
    quiet: settings.heartbeat_quiet ?? { from: '', to: '' },
    budget: settings.mission_token_budget ? String(settings.mission_token_budget) : '',
    ocrEngine: settings.ocr_engine,
    ocrLanguage: settings.ocr_language ?? 'auto',
  };
}

function patchOf(form: SettingsForm, settings: Settings | null, changedProvider: boolean): SettingsPatch {
  return {
    provider: form.provider,
    // A new provider starts from its usual endpoint unless the user typed another.
    ...(changedProvider && form.endpoint === settings?.endpoint ? {} : { endpoint: form.endpoint }),
    model: form.model,
    heartbeat_minutes: Number(form.heartbeat),
    heartbeat_quiet: form.quiet.from || form.quiet.to ? form.quiet : null,
    mission_token_budget: form.budget.trim() ? Number(form.budget) : 0,
    ocr_engine: form.ocrEngine,
    ocr_language: form.ocrLanguage,
    ...(form.apiKey.trim() ? { api_key: form.apiKey.trim() } : {}),
  };
}

interface FieldsProps {
  form: SettingsForm;
  edit(change: Partial<SettingsForm>): void;
}

export function SettingsDialog() {
  const client = useStackClient();
  const open = useAppStore((state) => state.settingsOpen);
  const setOpen = useAppStore((state) => state.setSettingsOpen);
  const settings = useAppStore((state) => state.view.settings);
  const dialog = useRef<HTMLDialogElement>(null);
  const [form, setForm] = useState<SettingsForm>(EMPTY_FORM);
  const edit = (change: Partial<SettingsForm>) => setForm((before) => ({ ...before, ...change }));
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // The form is filled once per opening: a setting saved on its own meanwhile (the network
  // switch, forgetting the key) must not wipe what the user is typing.
  const filled = useRef(false);

  useEffect(() => {
    if (!open) filled.current = false;
    if (open && settings && !filled.current) {
      filled.current = true;
      setForm(formOf(settings));
      setError(null);
    }
    if (open && !dialog.current?.open) dialog.current?.showModal();
    if (!open && dialog.current?.open) dialog.current.close();
  }, [open, settings]);

  const call = async (patch: SettingsPatch, close: boolean) => {
    setSaving(true);
    setError(null);
    try {
      await client.call('update_settings', patch);
      if (close) setOpen(false);
    } catch (failure) {
      setError(failure instanceof StackCallError ? failure.message : 'Could not save the settings.');
    } finally {
      setSaving(false);
    }
  };

  const changedProvider = settings !== null && form.provider !== settings.provider;

  return (
    <dialog ref={dialog} class="settings" aria-labelledby="settings-title" onClose={() => setOpen(false)}>
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          void call(patchOf(form, settings, changedProvider), true);
        }}
      >
        <h2 id="settings-title">Settings</h2>
        <ModelFields form={form} edit={edit} settings={settings} changedProvider={changedProvider} forgetKey={() => void call({ api_key: null }, false)} />
        <MissionFields form={form} edit={edit} />
        <ScanFields form={form} edit={edit} />
        {error && (
          <p class="settings-error" role="alert">
            {error}
          </p>
        )}
        <div class="settings-actions">
          <button type="button" class="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
          <button type="submit" class="button button--primary" disabled={saving}>
            Save
          </button>
        </div>
        <SettingsSections open={open} />
        <p class="settings-version">Stackdocs {__APP_VERSION__}</p>
      </form>
    </dialog>
  );
}

/** Where model calls go and which model: the provider, its endpoint, a key of the user's own. */
function ModelFields({ form, edit, settings, changedProvider, forgetKey }: FieldsProps & { settings: Settings | null; changedProvider: boolean; forgetKey(): void }) {
  const { provider, endpoint } = form;
  const hint = PROVIDERS.find((p) => p.value === provider)?.hint;
  return (
    <>
      <fieldset class="settings-providers">
        <legend>Model provider</legend>
        {PROVIDERS.map((option) => (
          <label key={option.value} class="settings-radio">
            <input type="radio" name="provider" value={option.value} checked={provider === option.value} onChange={() => edit({ provider: option.value })} />
            {option.label}
          </label>
        ))}
        <small>{hint}</small>
      </fieldset>
      <label>
        Model endpoint
        <input name="endpoint" type="url" required value={endpoint} onInput={(e) => edit({ endpoint: e.currentTarget.value })} />
        {changedProvider && <small>Leave as is to use the new provider's usual address.</small>}
      </label>
      {provider === 'proxy' && !changedProvider && endpoint === settings?.endpoint && <DevicePairing />}
      {provider !== 'proxy' && (
        <label>
          API key
          <input
            name="api_key"
            type="password"
            autocomplete="off"
            placeholder={settings?.has_api_key && !changedProvider ? 'A key is saved (type to replace it)' : provider === 'openai' ? 'Optional for local servers' : 'sk-ant-…'}
            value={form.apiKey}
            onInput={(e) => edit({ apiKey: e.currentTarget.value })}
          />
          <small class="settings-warning">
            The key is kept only in this browser and sent from it. Anyone using this browser profile can read it; on a shared
            computer or kiosk, use the proxy instead.
          </small>
          {settings?.has_api_key && (
            <button type="button" class="button settings-forget" onClick={forgetKey}>
              Forget the saved key
            </button>
          )}
        </label>
      )}
      <label>
        Model
        <input name="model" required value={form.model} onInput={(e) => edit({ model: e.currentTarget.value })} />
      </label>
    </>
  );
}

/** The agent's own check-ins (the heartbeat and its quiet hours) and a request's token budget. */
function MissionFields({ form, edit }: FieldsProps) {
  const { quiet } = form;
  return (
    <>
      <label>
        Heartbeat (minutes between the agent's own check-ins; 0 is off)
        <input name="heartbeat" type="number" min={0} max={1440} step={1} value={form.heartbeat} onInput={(e) => edit({ heartbeat: e.currentTarget.value })} />
      </label>
      <div class="settings-quiet" role="group" aria-label="Quiet hours">
        <span>Quiet hours (no heartbeat)</span>
        <input type="time" aria-label="Quiet from" value={quiet.from} onInput={(e) => edit({ quiet: { ...quiet, from: e.currentTarget.value } })} />
        <span>to</span>
        <input type="time" aria-label="Quiet until" value={quiet.to} onInput={(e) => edit({ quiet: { ...quiet, to: e.currentTarget.value } })} />
      </div>
      <label>
        Token budget per mission
        <input name="budget" type="number" min={0} step={1000} placeholder="No limit" value={form.budget} onInput={(e) => edit({ budget: e.currentTarget.value })} aria-describedby="budget-hint" />
      </label>
      <small id="budget-hint">A request stops, saying so, once it and its subagents have used this many tokens (the chat shows each request's). Empty: no limit.</small>
    </>
  );
}

/** Who reads scans, and in which language. */
function ScanFields({ form, edit }: FieldsProps) {
  const { provider, ocrEngine } = form;
  return (
    <>
      <label>
        Language of scans
        <select value={form.ocrLanguage} onChange={(event) => edit({ ocrLanguage: event.currentTarget.value as OcrLanguageChoice })} aria-describedby="ocr-language-hint">
          <option value="auto">Automatic (English, or another language when a page plainly is one)</option>
          {Object.entries(OCR_LANGUAGES).map(([code, name]) => (
            <option key={code} value={code}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <small id="ocr-language-hint">Languages other than English are downloaded the first time a scan needs them, then work offline.</small>
      <fieldset class="settings-providers" disabled={provider !== 'proxy'} aria-describedby="ocr-engine-hint">
        <legend>Read scans with</legend>
        {OCR_ENGINES.map((option) => (
          <label key={option.value} class="settings-radio">
            <input type="radio" name="ocr_engine" value={option.value} checked={ocrEngine === option.value} onChange={() => edit({ ocrEngine: option.value })} />
            {option.label}
          </label>
        ))}
        <small id="ocr-engine-hint">
          {provider !== 'proxy'
            ? 'Mistral OCR goes through the Stackdocs proxy, which holds its key: with this provider, scans are read in this browser.'
            : ocrEngine === 'mistral'
              ? 'Scans are sent to Mistral. If the proxy has no Mistral key or cannot be reached, they are read in this browser instead.'
              : 'Scans never leave this browser.'}
        </small>
      </fieldset>
    </>
  );
}

/** The sections below the form's buttons, each saved on its own. */
function SettingsSections({ open }: { open: boolean }) {
  return (
    <>
      <section class="rules" aria-labelledby="keys-title">
        <h3 id="keys-title">Keyboard</h3>
        <ShortcutList />
      </section>
      <TrustSection />
      <NetworkSection />
      <StorageSection />
      <MemorySection />
      <PermissionRules />
      {/* Each asks the stack for its content when shown: not at every start of the app. */}
      {open && (
        <>
          <HeartbeatChecklist />
          <SkillsSection />
          <HooksSection />
          <McpSection />
          <KioskSection stackId={currentStackId()} />
        </>
      )}
    </>
  );
}
