// Waits on an emulator's events and on its serial console, each with a deadline (a boot that
// does not come fails as MachineError `boot_failed`).
import type { EmulatorLike } from './emulator.ts';
import { MachineError } from './machine-contract.ts';

/** Resolves on the guest's next byte on its serial console. */
export function waitSerialOutput(emulator: EmulatorLike, timeoutMs: number): Promise<void> {
  return waitSerial(emulator, () => true, timeoutMs, 'the held computer did not answer on its console');
}

/** Resolves once the guest's serial console has written `text`. */
export function waitSerialText(emulator: EmulatorLike, text: string, timeoutMs: number): Promise<void> {
  let seen = '';
  return waitSerial(emulator, (byte) => {
    seen = (seen + String.fromCharCode(byte)).slice(-text.length);
    return seen === text;
  }, timeoutMs, `the console never said "${text}"`);
}

export function waitSerial(emulator: EmulatorLike, done: (byte: number) => boolean, timeoutMs: number, message: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const handler = ((byte: number) => {
      if (!done(byte)) return;
      clearTimeout(timer);
      emulator.remove_listener('serial0-output-byte', handler);
      resolve();
    }) as (value: never) => void;
    const timer = setTimeout(() => {
      emulator.remove_listener('serial0-output-byte', handler);
      reject(new MachineError('boot_failed', message));
    }, timeoutMs);
    emulator.add_listener('serial0-output-byte', handler);
  });
}

export function waitEvent(emulator: EmulatorLike, event: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new MachineError('boot_failed', `${event} did not come`)), timeoutMs);
    const handler = () => {
      clearTimeout(timer);
      emulator.remove_listener(event, handler);
      resolve();
    };
    emulator.add_listener(event, handler);
  });
}
