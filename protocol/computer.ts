// The computer as the app sees it: what it asks of it, its state, its network use.

/** The computer's network since the page opened: frame bytes out and in, all its starts and wakes together. */
export interface ComputerNetworkUse {
  sent_bytes: number;
  received_bytes: number;
  /** Whether the running computer started with the proxy's network behind it; null when it is not running. */
  online: boolean | null;
}

/**
 * What the app asks of the computer: `download` fetches the rest of its system image into this
 * browser (so it works offline) without starting it, e.g. once the app is installed.
 */
export type ComputerAction = 'start' | 'suspend' | 'reboot' | 'reset' | 'save' | 'download' | 'rest';

/**
 * The computer's state as the UI shows it. `progress` is 0..1 when known (image download,
 * boot). `wake_ms`: how long the last wake or boot took, shown to the user. `offline`: how much
 * of its system image this browser holds (0..1; 1: it works offline), once known.
 */
export type ComputerStatus = (
  | { state: 'unavailable'; message: string }
  | { state: 'off' }
  | { state: 'downloading'; progress: number; detail: string }
  | { state: 'booting'; detail: string }
  | { state: 'waking' }
  | { state: 'ready'; woke: boolean; wake_ms: number | null }
  | { state: 'suspended' }
  | { state: 'error'; message: string; can_reboot: boolean }
) & { offline?: number };
