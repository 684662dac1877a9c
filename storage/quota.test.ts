import { describe, expect, it } from 'vitest';
import { isQuotaError, isQuotaFailure, storageEstimate } from './quota.ts';

describe('quota failures', () => {
  it('tells a quota refusal apart from other failures', () => {
    expect(isQuotaError(new DOMException('full', 'QuotaExceededError'))).toBe(true);
    expect(isQuotaError(new DOMException('gone', 'NotFoundError'))).toBe(false);
    expect(isQuotaError(null)).toBe(false);
  });

  it('finds one a few causes down, not further', () => {
    const quota = new DOMException('full', 'QuotaExceededError');
    expect(isQuotaFailure(new Error('save failed', { cause: new Error('write failed', { cause: quota }) }))).toBe(true);
    let deep: unknown = quota;
    for (let i = 0; i < 5; i++) deep = new Error(`level ${i}`, { cause: deep });
    expect(isQuotaFailure(deep)).toBe(false);
    expect(isQuotaFailure(new Error('other'))).toBe(false);
  });

  it('says nothing of the quota where the platform does not (Node)', async () => {
    expect(await storageEstimate()).toBeUndefined();
  });
});
