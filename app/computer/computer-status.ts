// The computer's status in words, for the header chip and the terminal's overlay. Pure, so it is
// unit tested.
import type { ComputerStatus } from '../../protocol/computer.ts';
import { assertNever } from '../../protocol/errors.ts';

/** A short phrase after "Computer: ", e.g. "downloading 42%" or "ready (woke in 0.6 s)". */
export function computerChipText(status: ComputerStatus): string {
  switch (status.state) {
    case 'unavailable':
      return 'unavailable';
    case 'off':
      return 'off';
    case 'downloading':
      return `downloading ${percent(status.progress)}%`;
    case 'booting':
      return 'booting…';
    case 'waking':
      return 'waking…';
    case 'ready':
      return status.wake_ms === null ? 'ready' : `ready (${status.woke ? 'woke' : 'booted'} in ${seconds(status.wake_ms)} s)`;
    case 'suspended':
      return 'suspended';
    case 'error':
      return 'error';
    default:
      return assertNever(status, 'computer status');
  }
}

/**
 * How much of the computer works offline, while it is not all there: "available offline: 63%".
 * Null once the whole system image is in this browser (or before anything is known).
 */
export function offlineText(status: ComputerStatus): string | null {
  if (status.offline === undefined || status.offline >= 1 || status.state === 'unavailable') return null;
  return `available offline: ${Math.min(99, percent(status.offline))}%`;
}

/** 0..1 as a whole percentage, clamped (a progress that overshoots never reads 101%). */
export function percent(progress: number): number {
  if (!Number.isFinite(progress)) return 0;
  return Math.round(Math.min(1, Math.max(0, progress)) * 100);
}

/** Milliseconds as seconds with one decimal, or two under a tenth (a fast wake is not "0.0 s"). */
export function seconds(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  return s > 0 && s < 0.1 ? s.toFixed(2) : s.toFixed(1);
}
