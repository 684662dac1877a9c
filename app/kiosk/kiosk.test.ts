import { describe, expect, it } from 'vitest';
import { checkPin, endKiosk, hashPin, KioskClosedError, kioskConfig, lockLength, startKiosk, MAX_PIN_FAILURES, nextDailyReset, pinProblem, PIN_LOCK_MS, readKiosk } from './kiosk.ts';

function memoryStore() {
  const data = new Map<string, string>();
  return { getItem: (key: string) => data.get(key) ?? null, setItem: (key: string, value: string) => void data.set(key, value), removeItem: (key: string) => void data.delete(key), data };
}

describe('kiosk mode', () => {
  it('keeps a salted PBKDF2 hash of the PIN, never the PIN', async () => {
    const store = memoryStore();
    const config = await kioskConfig('s-1', { pin: '482916', idle_ms: 180_000, daily_reset: '06:00', allow_terminal: false });
    store.setItem('stackdocs:kiosk', JSON.stringify(config));
    expect([...store.data.values()].join()).not.toContain('482916');
    expect(config).toMatchObject({ stack: 's-1', iterations: 200_000, idle_ms: 180_000, daily_reset: '06:00', failures: 0 });
    expect(Buffer.from(config.salt, 'base64')).toHaveLength(16);
    expect(Buffer.from(config.hash, 'base64')).toHaveLength(32);
    // Another kiosk with the same PIN has another salt and hash.
    const other = await kioskConfig('s-1', { pin: '482916', idle_ms: 1, daily_reset: null, allow_terminal: true });
    expect(other.hash).not.toBe(config.hash);
    expect(readKiosk(store)?.stack).toBe('s-1');
    expect(pinProblem('12a456')).toBe('The PIN is 6 to 12 digits.');
    expect(pinProblem('123456')).toBeNull();
    expect(pinProblem('1234567890123')).toBe('The PIN is 6 to 12 digits.');
    // Four and five digits are ten and a hundred thousand guesses: too few.
    for (const pin of ['12', '2468', '24680']) {
      expect(pinProblem(pin)).toBe('The PIN is 6 to 12 digits.');
      await expect(kioskConfig('s-1', { pin, idle_ms: 1, daily_reset: null, allow_terminal: false })).rejects.toThrow('The PIN is 6 to 12 digits.');
    }
  });

  it('five wrong PINs lock entry for a minute, across reloads; the right one clears the count', async () => {
    const store = memoryStore();
    store.setItem('stackdocs:kiosk', JSON.stringify(await kioskConfig('s-1', { pin: '246813', idle_ms: 1, daily_reset: null, allow_terminal: false })));
    const t = 1_000_000;
    for (let n = 1; n < MAX_PIN_FAILURES; n++) expect(await checkPin('1111', t, store)).toEqual({ ok: false, locked: false, message: `Wrong PIN (${n} of 5).` });
    expect(await checkPin('1111', t, store)).toEqual({ ok: false, locked: true, message: 'Wrong PIN, 5 times: entry is locked for a minute.' });
    // Even the right PIN waits out the minute.
    expect(await checkPin('246813', t + 30_000, store)).toEqual({ ok: false, locked: true, message: 'Too many wrong PINs: try again in 30 s.' });
    expect(readKiosk(store)?.locked_until).toBe(t + PIN_LOCK_MS);
    expect(await checkPin('246813', t + PIN_LOCK_MS + 1, store)).toEqual({ ok: true });
    expect(await checkPin('1111', t + PIN_LOCK_MS + 2, store)).toMatchObject({ message: 'Wrong PIN (1 of 5).' });
  });

  it('each lock lasts twice the one before, up to an hour, across reloads, until the right PIN', async () => {
    const store = memoryStore();
    const config = await kioskConfig('s-1', { pin: '246813', idle_ms: 1, daily_reset: null, allow_terminal: false });
    // Fewer rounds of the hash than a real kiosk's: forty-odd tries follow.
    const salt = new Uint8Array(16);
    store.setItem('stackdocs:kiosk', JSON.stringify({ ...config, salt: Buffer.from(salt).toString('base64'), hash: await hashPin('246813', salt, 1000), iterations: 1000 }));
    let t = 1_000_000;
    const fiveWrong = async () => {
      for (let n = 1; n < MAX_PIN_FAILURES; n++) await checkPin('000000', t, store);
      return checkPin('000000', t, store);
    };
    const seen: string[] = [];
    for (let lock = 0; lock < 8; lock++) {
      const outcome = await fiveWrong();
      if (!outcome.ok) seen.push(outcome.message.replace('Wrong PIN, 5 times: entry is locked for ', ''));
      const until = readKiosk(store)!.locked_until;
      expect(until - t).toBe(lockLength(lock));
      // Still locked a moment before its end, whatever is typed; the page loading again changes nothing.
      expect(await checkPin('000000', until - 1, store)).toMatchObject({ ok: false, locked: true });
      expect(readKiosk(store)!.locked_until).toBe(until);
      t = until;
    }
    expect(seen).toEqual(['a minute.', '2 minutes.', '4 minutes.', '8 minutes.', '16 minutes.', '32 minutes.', 'an hour.', 'an hour.']);
    expect(await checkPin('000000', t + 1, store)).toMatchObject({ ok: false, locked: false });
    expect(await checkPin('000000', t - 1, store)).toMatchObject({ message: 'Too many wrong PINs: try again in 1 s.' });
    // The right PIN clears the locks: the next five wrong ones lock for a minute again.
    expect(await checkPin('246813', t, store)).toEqual({ ok: true });
    expect(await fiveWrong()).toMatchObject({ message: 'Wrong PIN, 5 times: entry is locked for a minute.' });
    expect(lockLength(100)).toBe(60 * 60_000);
  });

  it('a kiosk started with a four-digit PIN keeps it until its owner leaves kiosk mode', async () => {
    const store = memoryStore();
    const salt = new Uint8Array(16);
    // As such a kiosk was kept: no count of locks.
    const old = { stack: 's-1', salt: Buffer.from(salt).toString('base64'), hash: await hashPin('2468', salt, 1000), iterations: 1000, idle_ms: 1, daily_reset: null, allow_terminal: false, failures: 4, locked_until: 0 };
    store.setItem('stackdocs:kiosk', JSON.stringify(old));
    expect(await checkPin('1357', 0, store)).toMatchObject({ message: 'Wrong PIN, 5 times: entry is locked for a minute.' });
    expect(await checkPin('2468', PIN_LOCK_MS, store)).toEqual({ ok: true });
  });

  it('starts: marked, closed, copied as its point, then kept; a point that fails leaves no kiosk and says the stack closed', async () => {
    const calls: string[] = [];
    const client = { call: async (method: string, params: unknown) => void calls.push(`${method} ${JSON.stringify(params)}`), close: () => void calls.push('stop worker') } as never;
    let fail = false;
    const stacks = {
      saveResetPoint: async (id: string, { heldByCaller }: { heldByCaller: boolean }) => {
        calls.push(`save point ${id} held=${heldByCaller}`);
        if (fail) throw new Error('The browser\'s storage for Stackdocs is full.');
        return { bytes: 1 };
      },
      dropResetPoint: async (id: string) => (calls.push(`drop point ${id}`), null),
    } as never;
    const config = await kioskConfig('s-1', { pin: '246813', idle_ms: 1, daily_reset: null, allow_terminal: false });
    const store = memoryStore();
    await startKiosk(client, stacks, 's-1', config, store);
    expect(calls).toEqual(['update_settings {"kiosk":true}', 'close {}', 'stop worker', 'save point s-1 held=true']);
    expect(readKiosk(store)).toEqual(config);
    calls.length = 0;
    await endKiosk(client, stacks, 's-1', store);
    expect(calls).toEqual(['update_settings {"kiosk":false}', 'drop point s-1']);
    expect(readKiosk(store)).toBeNull();
    fail = true;
    await expect(startKiosk(client, stacks, 's-1', config, store)).rejects.toBeInstanceOf(KioskClosedError);
    expect(readKiosk(store)).toBeNull();
  });

  it('finds the next daily reset in local time', () => {
    const now = new Date(2026, 10, 26, 5, 30).getTime();
    expect(nextDailyReset('06:00', now)).toBe(new Date(2026, 10, 26, 6, 0).getTime());
    expect(nextDailyReset('05:00', now)).toBe(new Date(2026, 10, 27, 5, 0).getTime());
    expect(nextDailyReset(null, now)).toBeNull();
  });
});
