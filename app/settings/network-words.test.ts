import { describe, expect, it } from 'vitest';
import { describePorts, describeTraffic, formatBytes, pendingSwitch } from './network-words.ts';

describe('network words', () => {
  it('words bytes in human units', () => {
    expect([0, 1, 999, 1023, 1024, 1536, 10 * 1024 + 300, 1024 * 1024 * 3.44, 1024 ** 3 * 1.2, 1024 ** 5 * 2].map(formatBytes)).toEqual([
      '0 B', '1 B', '999 B', '1023 B', '1 KB', '1.5 KB', '10 KB', '3.4 MB', '1.2 GB', '2048 TB',
    ]);
  });

  it('says what was sent and received this session', () => {
    expect(describeTraffic({ sent_bytes: 12_345, received_bytes: 1_468_006 })).toBe('12 KB sent · 1.4 MB received this session');
    expect(describeTraffic({ sent_bytes: 0, received_bytes: 0 })).toBe('0 B sent · 0 B received this session');
  });

  it('lists ports', () => {
    expect(describePorts([])).toBe('no port');
    expect(describePorts([443])).toBe('port 443');
    expect(describePorts([80, 443])).toBe('ports 80 and 443');
    expect(describePorts([22, 80, 443])).toBe('ports 22, 80 and 443');
  });

  it('tells when a running computer does not have what the switch says yet', () => {
    expect(pendingSwitch(true, null)).toBeNull();
    expect(pendingSwitch(false, false)).toBeNull();
    expect(pendingSwitch(true, true)).toBeNull();
    expect(pendingSwitch(false, true)).toContain('offline');
    expect(pendingSwitch(true, false)).toContain('no network right now');
  });
});
