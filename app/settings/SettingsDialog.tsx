// Settings: which model endpoint (the proxy that holds the key) and which model.
import { useEffect, useRef, useState } from 'preact/hooks';
import { StackCallError } from '../stack-client.ts';
import { useStackClient } from '../stack-context.ts';
import { useAppStore } from '../store.ts';

export function SettingsDialog() {
  const client = useStackClient();
  const open = useAppStore((state) => state.settingsOpen);
  const setOpen = useAppStore((state) => state.setSettingsOpen);
  const settings = useAppStore((state) => state.view.settings);
  const dialog = useRef<HTMLDialogElement>(null);
  const [endpoint, setEndpoint] = useState('');
  const [model, setModel] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    if (open && settings) {
      setEndpoint(settings.endpoint);
      setModel(settings.model);
      setError(null);
    }
    if (open && !dialog.current?.open) dialog.current?.showModal();
    if (!open && dialog.current?.open) dialog.current.close();
  }, [open, settings]);

  const save = async () => {
    setSaving(true);
    setError(null);
    try {
      await client.call('update_settings', { endpoint, model });
      setOpen(false);
    } catch (failure) {
      setError(failure instanceof StackCallError ? failure.message : 'Could not save the settings.');
    } finally {
      setSaving(false);
    }
  };

  return (
    <dialog ref={dialog} class="settings" aria-labelledby="settings-title" onClose={() => setOpen(false)}>
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <h2 id="settings-title">Settings</h2>
        <label>
          Model endpoint
          <input name="endpoint" type="url" required value={endpoint} onInput={(e) => setEndpoint(e.currentTarget.value)} />
          <small>The Stackdocs proxy that holds the API key. Your browser never sees the key.</small>
        </label>
        <label>
          Model
          <input name="model" required value={model} onInput={(e) => setModel(e.currentTarget.value)} />
        </label>
        {error && <p class="settings-error" role="alert">{error}</p>}
        <div class="settings-actions">
          <button type="button" class="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
          <button type="submit" class="button button--primary" disabled={saving}>
            Save
          </button>
        </div>
      </form>
    </dialog>
  );
}
