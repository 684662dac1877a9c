// The computer's network as the VM worker runs it: the link behind the card, its traffic, and
// the notices of refused lookups (and of a disk waiting for the image), told where the command
// came from: in the bash tool's result for the agent's commands, as a line in the terminal for
// the user's.
import type { DnsNotice } from '../network.ts';
import { installNetworkLink, type NetworkLink } from '../network-link.ts';
import type { VmApi } from '../protocol.ts';
import { createTrafficCounter, type TrafficCounter } from '../traffic.ts';
import type { VmContext } from './context.ts';

export interface VmNetworkNotices {
  readonly link: NetworkLink;
  readonly traffic: TrafficCounter;
  /** How many notices so far (a command notes it when it starts). */
  count(): number;
  /** The distinct notices after the `n`th. */
  since(n: number): string[];
  /** A notice that is not a lookup's (the disk waiting for the image), already told in the terminal. */
  record(line: string): void;
}

export function createNetworkNotices(ctx: VmContext): VmNetworkNotices {
  // The guest's DNS goes to the proxy's resolver with the current network ticket.
  let noticeCount = 0;
  const recentNotices: { n: number; line: string }[] = [];
  // A resolver asks twice (A and AAAA) and retries: the terminal says each reason once a moment.
  let lastTerminalLine = { line: '', at: 0 };
  const notify = (notice: DnsNotice) => {
    const line = `${notice.name}: ${notice.reason}`;
    recentNotices.push({ n: ++noticeCount, line });
    if (recentNotices.length > 50) recentNotices.shift();
    const now = Date.now();
    if (ctx.activeExecs === 0 && (line !== lastTerminalLine.line || now - lastTerminalLine.at > 3000)) {
      lastTerminalLine = { line, at: now };
      const bytes = new TextEncoder().encode(`\r\n\x1b[33m[network] ${line}\x1b[0m\r\n`);
      ctx.writeTerminal(bytes);
    }
  };
  const link = installNetworkLink(ctx.deps.networkScope ?? globalThis, notify);
  // Only frames that have the proxy's relay behind them: offline, the card sends into nothing.
  const traffic = createTrafficCounter(() => link.online);
  return {
    link,
    traffic,
    count: () => noticeCount,
    since: (n) => [...new Set(recentNotices.filter((notice) => notice.n > n).map((notice) => notice.line))],
    record(line) {
      recentNotices.push({ n: ++noticeCount, line });
    },
  };
}

export function networkApi(notices: VmNetworkNotices): Pick<VmApi, 'networkTraffic' | 'setNetwork'> {
  return {
    async networkTraffic() {
      return notices.traffic.totals();
    },
    async setNetwork(network, offline) {
      notices.link.set(network, offline);
    },
  };
}
