import { describe, expect, it } from 'vitest';
import { formatBytes } from '../protocol/wording.ts';
import { noRoomMessage, storageFullMessage } from './storage-full.ts';

describe('storage messages', () => {
  it('words sizes as the browser does, in decimal units', () => {
    expect([0, 999, 1000, 12_345, 999_999, 1_000_000, 3_456_789, 12_345_678, 2_200_000_000].map(formatBytes)).toEqual([
      '0 bytes',
      '999 bytes',
      '1 KB',
      '12 KB',
      '1.0 MB',
      '1.0 MB',
      '3.5 MB',
      '12 MB',
      '2.2 GB',
    ]);
  });

  it('says nothing when the bytes fit or the browser does not say', () => {
    expect(noRoomMessage('a.pdf was not added', 1_000, { usage: 0, quota: 1_000 })).toBeNull();
    expect(noRoomMessage('a.pdf was not added', 1_000, undefined)).toBeNull();
    expect(noRoomMessage('a.pdf was not added', 1_000, { usage: 10 })).toBeNull();
    expect(noRoomMessage('a.pdf was not added', 1_000, { usage: 10, quota: 0 })).toBeNull();
  });

  it('names what is needed, what is left and what is held when it will not fit', () => {
    expect(noRoomMessage('"Taxes" was not duplicated', 250_000_000, { usage: 2_160_000_000, quota: 2_200_000_000 })).toBe(
      '"Taxes" was not duplicated: it needs 250 MB and the browser\'s storage for Stackdocs has 40 MB left (it holds 2.2 GB). Delete documents or stacks you no longer need, or free space on this device, then try again.',
    );
    // More used than granted (the browser's figures are estimates): none left, not a negative size.
    expect(noRoomMessage('x was not added', 1, { usage: 2_000, quota: 1_000 })).toContain('has 0 bytes left');
  });

  it('keeps the full-storage message', () => {
    expect(storageFullMessage('x was not added', 5_400_000)).toBe(
      "x was not added: the browser's storage for Stackdocs is full (it holds 5.4 MB). Delete documents or stacks you no longer need, or free space on this device, then try again.",
    );
  });
});
