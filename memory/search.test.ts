import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUERY_TERMS, queryTerms, toFtsQuery } from './fts-query.ts';
import { RANK_CAP } from './search.ts';
import { openTestMemory, type TestMemory } from './test-helpers.ts';

let m: TestMemory;

beforeAll(async () => {
  m = await openTestMemory();
  const learnings = [
    { type: 'preference', content: 'Write vendor names in uppercase' },
    { type: 'fact', content: 'The main vendor is Acme Ltd; invoices arrive monthly' },
    { type: 'fact', content: 'The user lives in Zürich' },
    { type: 'tool_install', content: 'pandas installed with pip for the spending report' },
    { type: 'pattern', content: 'Asks for a CSV export after every extraction' },
    { type: 'correction', content: 'Totals include VAT; the vendor total was wrong before' },
    { type: 'fact', content: '請求書は毎月届く' },
  ] as const;
  for (const learning of learnings) {
    m.tick(60_000);
    await m.memory.addLearnings([learning]);
  }
});

afterAll(async () => {
  await m.close();
});

describe('searchMemory', () => {
  it('ranks matching learnings by relevance and returns type, content and date', async () => {
    const results = await m.search('vendor uppercase');
    expect(results[0]).toEqual({
      id: 1,
      type: 'preference',
      content: 'Write vendor names in uppercase',
      date: '2026-01-01T00:01:00.000Z',
      createdAt: Date.UTC(2026, 0, 1, 0, 1),
      sourceLabel: null,
    });
    expect(results).toHaveLength(1); // both words: only one learning has them

    const vendor = await m.search('vendor');
    expect(vendor.map((r) => r.id).sort()).toEqual([1, 2, 6]);
    // BM25 prefers the shortest document with the word.
    expect(vendor[0]!.id).toBe(1);
  });

  it('falls back to any word when no learning has them all', async () => {
    const results = await m.search('pandas zürich nothingmatches');
    expect(results.map((r) => r.content).sort()).toEqual(['The user lives in Zürich', 'pandas installed with pip for the spending report']);
  });

  it('returns the most recent learnings for an empty query', async () => {
    const results = await m.search('', 3);
    expect(results.map((r) => r.id)).toEqual([7, 6, 5]);
    expect((await m.search('   ')).length).toBe(7);
  });

  it('folds case and diacritics, and finds non-Latin words', async () => {
    expect((await m.search('ZURICH')).map((r) => r.id)).toEqual([3]);
    expect((await m.search('請求書は毎月届く')).map((r) => r.id)).toEqual([7]);
  });

  it('honours the limit, clamped to 1..50', async () => {
    expect(await m.search('', 2)).toHaveLength(2);
    expect(await m.search('', 0)).toHaveLength(7); // 0 and nonsense mean the default (10)
    expect(await m.search('', Number.NaN)).toHaveLength(7);
  });

  it('never turns user text into an FTS syntax error', async () => {
    const nasty = [
      '"',
      '""',
      'AND OR (',
      '*',
      'NEAR(',
      'NEAR(vendor acme, 2)',
      'col:thing',
      'content:vendor',
      '{content type}: vendor',
      '^vendor',
      'vendor*',
      '-vendor',
      'NOT',
      'vendor NOT acme',
      ')))(((',
      "'; DROP TABLE learnings; --",
      '\u0000\u0001',
      '🙂 emoji',
      'e\u0301',
      'x'.repeat(100_000),
      Array.from({ length: 5_000 }, (_, i) => `w${i}`).join(' '),
    ];
    for (const query of nasty) {
      const results = await m.search(query);
      expect(Array.isArray(results)).toBe(true);
    }
    // Operators are words: no learning holds "NEAR", so any-word matching ranks Acme's learning first.
    expect((await m.search('NEAR(vendor acme, 2)'))[0]!.id).toBe(2);
    expect((await m.search('content:vendor')).map((r) => r.id).sort()).toEqual([1, 2, 6]);
    expect(await m.memory.countLearnings()).toBe(7);
  });
});

describe('FTS query building', () => {
  it('quotes every term and drops operators to plain words', () => {
    expect(queryTerms('AND OR ( "x" NEAR( col:thing *')).toEqual(['AND', 'OR', 'x', 'NEAR', 'col', 'thing']);
    expect(toFtsQuery(['AND', 'OR'], 'AND')).toBe('"AND" AND "OR"');
    expect(toFtsQuery([], 'OR')).toBeNull();
    expect(queryTerms('Vendor vendor VENDOR')).toEqual(['Vendor']);
    expect(queryTerms(Array.from({ length: 100 }, (_, i) => `t${i}`).join(' '))).toHaveLength(MAX_QUERY_TERMS);
    expect(queryTerms('ｆｕｌｌｗｉｄｔｈ')).toEqual(['fullwidth']);
  });
});

describe('searchMemory on unselective queries', () => {
  it('ranks by BM25 up to RANK_CAP matches and lists the newest beyond', async () => {
    const big = await openTestMemory();
    try {
      const rows = Array.from({ length: RANK_CAP + 100 }, (_, i) => ({
        type: 'fact' as const,
        content: i === 5 ? 'common common common rare' : `common filler number ${i}${i % 3 === 0 ? ' rare' : ''}`,
        createdAt: Date.UTC(2026, 0, 1) + i,
      }));
      await big.memory.addLearnings(rows);
      const newest = await big.search('common', 3);
      expect(newest.map((r) => r.id)).toEqual([RANK_CAP + 100, RANK_CAP + 99, RANK_CAP + 98]);
      // "rare" matches 701 learnings: ranked, so the one with the most "common" words leads for both words.
      const ranked = await big.search('rare common', 1);
      expect(ranked[0]!.content).toBe('common common common rare');
    } finally {
      await big.close();
    }
  });
});
