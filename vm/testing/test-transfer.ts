// For tests in Node 20, which lacks ArrayBuffer.prototype.transfer (what letGo calls): while each
// test runs, a stand-in that detaches the buffer as browsers and Node 22 do.
import { afterEach, beforeEach } from 'vitest';

export function useArrayBufferTransfer(): void {
  let had: PropertyDescriptor | undefined;
  beforeEach(() => {
    had = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'transfer');
    if (!had) Object.defineProperty(ArrayBuffer.prototype, 'transfer', { configurable: true, value(this: ArrayBuffer, length: number) { return structuredClone(this, { transfer: [this] }).slice(0, length); } });
  });
  afterEach(() => {
    if (!had) delete (ArrayBuffer.prototype as { transfer?: unknown }).transfer;
  });
}
