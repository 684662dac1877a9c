// This browser and the proxy: paired (under which name), or how to pair it with the one-time code
// the proxy's owner gives (`npm run pair`). The browser keeps a revocable device token, never a key.
import { useState } from 'preact/hooks';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';

export function DevicePairing() {
  const client = useStackClient();
  const model = useAppStore((state) => state.view.model);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      setCode('');
    } catch (failure) {
      setError(failure instanceof StackCallError ? failure.message : 'The stack did not answer. Reload the page.');
    } finally {
      setBusy(false);
    }
  };

  if (model.state === 'ready' && model.device) {
    return (
      <div class="settings-device" role="group" aria-label="This device">
        <p>
          This browser is paired with the proxy as <strong>{model.device}</strong>. The proxy's owner can unpair it at any time.
        </p>
        <button type="button" class="button" disabled={busy} onClick={() => void run(() => client.call('unpair_device', {}))}>
          Unpair this browser
        </button>
      </div>
    );
  }
  if (model.state !== 'not_configured' || !model.pairing) return null;
  return (
    <div class="settings-device" role="group" aria-label="This device">
      <label>
        Pairing code
        <input
          name="pairing_code"
          autocomplete="one-time-code"
          placeholder="ABCD-1234"
          value={code}
          onInput={(event) => setCode(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter') {
              event.preventDefault();
              if (code.trim()) void run(() => client.call('pair_device', { code: code.trim() }));
            }
          }}
        />
        <small>The proxy only serves devices its owner paired. Get a code from them (on the machine running it: `npm run pair`).</small>
      </label>
      <button type="button" class="button" disabled={busy || !code.trim()} onClick={() => void run(() => client.call('pair_device', { code: code.trim() }))}>
        {busy ? 'Pairing…' : 'Pair this device'}
      </button>
      {error && <p role="alert">{error}</p>}
    </div>
  );
}
