import { describe, expect, it } from 'vitest';
import type { Settings } from '../protocol/settings.ts';
import { loadSettings, mergeSettings, saveSettings, SettingsError } from './settings.ts';
import { createMemoryStorage } from '../storage/json-files.ts';

const DEFAULTS: Settings = {
  provider: 'proxy',
  endpoint: 'http://127.0.0.1:8787',
  model: 'claude-test',
  heartbeat_minutes: 0,
  has_api_key: false,
  ocr_engine: 'local',
  computer_network: true,
};

describe('mergeSettings: ocr_engine', () => {
  it('takes either engine, and keeps the choice when the provider changes', () => {
    const mistral = mergeSettings(DEFAULTS, { ocr_engine: 'mistral' });
    expect(mistral.ocr_engine).toBe('mistral');
    expect(mergeSettings(mistral, { ocr_engine: 'local' }).ocr_engine).toBe('local');
    expect(mergeSettings(mistral, { provider: 'anthropic' }).ocr_engine).toBe('mistral');
    expect(mergeSettings(mistral, { heartbeat_minutes: 5 }).ocr_engine).toBe('mistral');
  });

  it('refuses anything else, naming the two choices', () => {
    for (const bad of ['tesseract', '', 'Mistral', 1, null]) {
      expect(() => mergeSettings(DEFAULTS, { ocr_engine: bad as never })).toThrow(SettingsError);
    }
    expect(() => mergeSettings(DEFAULTS, { ocr_engine: 'cloud' as never })).toThrow(
      'Scans are read "local" (in this browser, offline) or "mistral" (Mistral OCR through the proxy).',
    );
  });
});

describe('loadSettings', () => {
  it('gives settings saved before ocr_engine existed the local engine', async () => {
    const { ocr_engine: _absent, has_api_key: _derived, ...old } = { ...DEFAULTS, model: 'claude-old', heartbeat_minutes: 30 };
    const storage = createMemoryStorage({ 'settings.json': JSON.stringify(old) });
    const loaded = await loadSettings(storage, DEFAULTS);
    expect(loaded).toEqual({ ...DEFAULTS, model: 'claude-old', heartbeat_minutes: 30, ocr_engine: 'local' });
  });

  it('round-trips a saved choice', async () => {
    const storage = createMemoryStorage();
    await saveSettings(storage, { ...DEFAULTS, ocr_engine: 'mistral' });
    expect(JSON.parse(storage.files.get('settings.json')!)).toMatchObject({ ocr_engine: 'mistral' });
    expect((await loadSettings(storage, DEFAULTS)).ocr_engine).toBe('mistral');
  });

  it('falls back to the defaults when the stored engine is not one it knows', async () => {
    const storage = createMemoryStorage({ 'settings.json': JSON.stringify({ ...DEFAULTS, model: 'x', ocr_engine: 'future-engine' }) });
    expect(await loadSettings(storage, DEFAULTS)).toEqual(DEFAULTS);
  });
});

describe('computer_network (whether the computer may use the network)', () => {
  it('is turned off and on, and kept when other settings change', () => {
    const off = mergeSettings(DEFAULTS, { computer_network: false });
    expect(off.computer_network).toBe(false);
    expect(mergeSettings(off, { provider: 'anthropic', model: 'claude-other' }).computer_network).toBe(false);
    expect(mergeSettings(off, { computer_network: true }).computer_network).toBe(true);
  });

  it('refuses anything but true or false, saying which', () => {
    for (const bad of ['false', 0, 1, null, 'off']) {
      expect(() => mergeSettings(DEFAULTS, { computer_network: bad as never })).toThrow(SettingsError);
    }
    expect(() => mergeSettings(DEFAULTS, { computer_network: 'no' as never })).toThrow(`The computer's network is turned on with true or off with false, not "no".`);
  });

  it('is on for settings saved before it existed, and a saved "off" stays off', async () => {
    const { computer_network: _absent, has_api_key: _derived, ...old } = { ...DEFAULTS, model: 'claude-old' };
    expect((await loadSettings(createMemoryStorage({ 'settings.json': JSON.stringify(old) }), DEFAULTS)).computer_network).toBe(true);

    const storage = createMemoryStorage();
    await saveSettings(storage, { ...DEFAULTS, computer_network: false });
    expect(JSON.parse(storage.files.get('settings.json')!)).toMatchObject({ computer_network: false });
    expect((await loadSettings(storage, DEFAULTS)).computer_network).toBe(false);
  });
});

describe('mergeSettings: ocr_language', () => {
  it('takes auto or a shipped language, and refuses others naming the choices', () => {
    expect(DEFAULTS.ocr_language).toBeUndefined();
    expect(mergeSettings(DEFAULTS, { ocr_language: 'deu' }).ocr_language).toBe('deu');
    expect(mergeSettings(DEFAULTS, { ocr_language: 'auto' }).ocr_language).toBe('auto');
    expect(() => mergeSettings(DEFAULTS, { ocr_language: 'klingon' as never })).toThrow('Scans are read in "auto" or one of eng, deu, fra, spa, ita, por, nld, not "klingon".');
  });
});

describe('detectLanguage', () => {
  it('tells an invoice in German, French or Dutch from one in English, and says nothing of too little text', async () => {
    const { detectLanguage } = await import('./documents/languages.ts');
    expect(detectLanguage('Rechnung Nr. RE-2025-114 Datum 06.10.2025 Menge Einzelpreis Betrag Zwischensumme MwSt 19% Gesamt Bitte zahlbar innerhalb 14 Tagen')).toBe('deu');
    expect(detectLanguage('Facture n° F-0098 date quantité prix unitaire montant total HT TVA 20% total TTC à payer avant échéance')).toBe('fra');
    expect(detectLanguage('Factuur factuurnummer datum aantal prijs bedrag subtotaal btw 21% totaal te betalen voor de vervaldatum')).toBe('nld');
    expect(detectLanguage('Invoice number INV-2931 date 06/10/2025 quantity unit price amount subtotal GST 10% total due for payment')).toBeNull();
    expect(detectLanguage('Rechnung 12')).toBeNull();
  });
});
