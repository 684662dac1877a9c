// The computer's network: v86's virtio NIC with its Wisp adapter, whose relay and resolver are the
// Stackdocs proxy's (a paired device's network ticket authorises both). v86 asks for DNS with a
// plain fetch to https://<doh_server>/dns-query; that fetch is answered here, by the proxy's
// resolver with the ticket, and turned into a DNS refusal at once when the proxy cannot answer
// (offline, not allowed), so the guest's tools fail in a second instead of waiting.
import { DOH_SENTINEL } from './emulator-options.ts';
import { questionName, refused, type DnsNotice, type VmNetwork } from './network.ts';

/**
 * Wraps `scope.fetch` so v86's DoH requests reach the proxy's resolver with the ticket. Returns a
 * function that sets the current network (null: every lookup is refused as offline).
 */
export function installDnsBridge(scope: { fetch: typeof fetch }, onNotice: (notice: DnsNotice) => void): (network: VmNetwork | null) => void {
  let current: VmNetwork | null = null;
  const original = scope.fetch.bind(scope);
  scope.fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(`https://${DOH_SENTINEL}/`)) return original(input, init);
    const query = new Uint8Array(await new Response(init?.body ?? null).arrayBuffer());
    const name = questionName(query) ?? 'a name';
    if (!current) {
      onNotice({ name, reason: 'the computer is offline (its network is off)' });
      return dnsAnswer(refused(query));
    }
    try {
      const response = await original(current.dnsUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/dns-message', authorization: `Bearer ${current.ticket}` },
        body: query,
        credentials: 'omit',
        // Under the guest resolver's own 10 s (rc.sysinit), so the guest always hears the refusal.
        signal: AbortSignal.timeout(8_000),
      });
      const why = response.headers.get('x-stackdocs-refused');
      if (why) onNotice({ name, reason: `not allowed by the proxy: ${why}` });
      if (response.ok && response.headers.get('content-type') === 'application/dns-message') return response;
      onNotice({ name, reason: response.status === 401 ? 'the proxy no longer accepts this device (pair it again in Settings)' : `the proxy's resolver answered ${response.status}` });
    } catch {
      const why = globalThis.navigator?.onLine === false ? 'this browser has no connection' : 'the proxy could not be reached';
      onNotice({ name, reason: `the computer is offline (${why})` });
    }
    return dnsAnswer(refused(query));
  };
  return (network) => {
    current = network;
  };
}

function dnsAnswer(message: Uint8Array<ArrayBuffer>): Response {
  return new Response(message, { headers: { 'content-type': 'application/dns-message' } });
}
