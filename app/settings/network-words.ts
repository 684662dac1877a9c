// How the Network section words the computer's network: bytes, traffic, the proxy's allowed
// ports, and what the switch does to a computer already running. Pure, so it is unit tested.
import type { ComputerNetworkUse } from '../../protocol/computer.ts';

/** 0 B, 999 B, 1.5 KB, 12 KB, 3.4 MB, 1.2 GB (1 KB = 1024 bytes). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit === 0 || value >= 10 ? String(Math.round(value)) : value.toFixed(1).replace(/\.0$/, '');
  return `${shown} ${units[unit]}`;
}

/** "12 KB sent · 1.4 MB received this session". */
export function describeTraffic(use: Pick<ComputerNetworkUse, 'sent_bytes' | 'received_bytes'>): string {
  return `${formatBytes(use.sent_bytes)} sent · ${formatBytes(use.received_bytes)} received this session`;
}

/** "port 443", "ports 80 and 443", "ports 22, 80 and 443". */
export function describePorts(ports: readonly number[]): string {
  if (ports.length === 0) return 'no port';
  if (ports.length === 1) return `port ${ports[0]}`;
  return `ports ${ports.slice(0, -1).join(', ')} and ${ports.at(-1)}`;
}

/**
 * What the switch means for the computer as it runs now (a change reaches it at once), or null
 * when there is nothing to add: not running, or running as the switch says.
 */
export function pendingSwitch(allowed: boolean, online: boolean | null): string | null {
  if (online === null || online === allowed) return null;
  return online
    ? 'Taking the computer offline…'
    : 'The computer has no network right now: it gets one as soon as this browser is paired with a proxy that answers.';
}
