// Network: the computer reaches the internet only through the Stackdocs proxy, for a paired
// browser, to the hosts the proxy allows. Shows whether this browser is paired, those hosts, what
// the computer sent and received this session, and the stack's switch for its network.
import { useEffect, useState } from 'preact/hooks';
import type { ComputerNetworkUse } from '../../protocol/computer.ts';
import type { ModelStatus, ProxyNetwork } from '../../protocol/settings.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';
import { describePorts, describeTraffic, pendingSwitch } from './network-words.ts';

/** How often the traffic is read while Settings is open. */
const POLL_MS = 2000;

export function NetworkSection() {
  const client = useStackClient();
  const open = useAppStore((state) => state.settingsOpen);
  const model = useAppStore((state) => state.view.model);
  const settings = useAppStore((state) => state.view.settings);
  const [use, setUse] = useState<ComputerNetworkUse | null>(null);
  const [trafficError, setTrafficError] = useState<string | null>(null);
  const [switchError, setSwitchError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    if (!open) return;
    let stopped = false;
    const read = () =>
      client.call('computer_network', {}).then(
        (next) => {
          if (stopped) return;
          setUse(next);
          setTrafficError(null);
        },
        (failure: unknown) => {
          if (!stopped) setTrafficError(failure instanceof StackCallError ? failure.message : 'The stack did not answer.');
        },
      );
    void read();
    const timer = setInterval(() => void read(), POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [open, client]);

  const allowed = settings?.computer_network ?? true;
  const toggle = async (next: boolean) => {
    setSaving(true);
    setSwitchError(null);
    try {
      await client.call('update_settings', { computer_network: next });
    } catch (failure) {
      setSwitchError(failure instanceof StackCallError ? failure.message : 'Could not save the setting.');
    } finally {
      setSaving(false);
    }
  };
  const paired = settings?.provider === 'proxy' ? pairing(model) : null;
  const pending = use ? pendingSwitch(allowed, use.online) : null;

  return (
    <section class="rules network" aria-labelledby="network-title">
      <h3 id="network-title">Network</h3>
      <p class="rules-hint">The computer reaches the internet only through the Stackdocs proxy, and only the hosts the proxy allows.</p>
      <p class="network-pairing">
        {settings?.provider !== 'proxy' ? (
          'This stack does not use the Stackdocs proxy, so the computer has no network.'
        ) : paired?.state === 'paired' ? (
          <>
            <strong>Paired</strong> with the proxy{paired.device ? ` as ${paired.device}` : ''}.
          </>
        ) : (
          paired?.text
        )}
      </p>
      {paired?.state === 'paired' &&
        (paired.network ? (
          <div class="network-hosts">
            <span id="network-hosts-title">
              The proxy lets the computer reach these hosts, on {describePorts(paired.network.ports)}:
            </span>
            <ul aria-labelledby="network-hosts-title">
              {paired.network.hosts.map((host) => (
                <li key={host}>
                  <code>{host}</code>
                </li>
              ))}
            </ul>
          </div>
        ) : (
          <p class="rules-hint">This proxy does not say which hosts it lets the computer reach.</p>
        ))}
      <label class="settings-radio network-switch">
        <input type="checkbox" role="switch" name="computer_network" checked={allowed} disabled={saving || !settings} onChange={(event) => void toggle(event.currentTarget.checked)} />
        The computer may use the network
      </label>
      <small class="network-note">{pending ?? 'A change reaches the running computer at once; its open connections end.'}</small>
      {switchError && (
        <p class="settings-error" role="alert">
          {switchError}
        </p>
      )}
      <p class="network-traffic" role="status">
        {trafficError ? `Could not read the computer's traffic: ${trafficError}` : use ? describeTraffic(use) : 'Reading the computer’s traffic…'}
      </p>
    </section>
  );
}

type Pairing = { state: 'paired'; device: string | null; network: ProxyNetwork | null } | { state: 'other'; text: string };

/** Whether this browser is paired with the proxy, from the model status (its GET /v1/device). */
function pairing(model: ModelStatus): Pairing {
  switch (model.state) {
    case 'unknown':
      return { state: 'other', text: 'Checking the proxy…' };
    case 'unreachable':
      return { state: 'other', text: 'The proxy cannot be reached, so the computer has no network.' };
    case 'ready':
      return { state: 'paired', device: model.device ?? null, network: model.network ?? null };
    case 'not_configured':
      // Without `pairing` the proxy knew this browser and only lacks a model key.
      if (!model.pairing) return { state: 'paired', device: model.device ?? null, network: model.network ?? null };
      return { state: 'other', text: 'Not paired: the computer has no network until this browser is paired with the proxy (above).' };
  }
}
