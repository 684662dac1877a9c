// Says plainly when no model can answer, and how to connect one.
import { useAppStore } from '../store.ts';

export function ModelBanner() {
  const model = useAppStore((state) => state.view.model);
  const openSettings = useAppStore((state) => state.setSettingsOpen);
  if (model.state === 'ready' || model.state === 'unknown') return null;
  return (
    <div class="model-banner" role="status" data-model-state={model.state}>
      <strong>{model.state === 'not_configured' ? 'No model connected' : 'Model endpoint unreachable'}</strong>
      <p>{model.message}</p>
      <button type="button" class="button" onClick={() => openSettings(true)}>
        Open settings
      </button>
    </div>
  );
}
