// Deterministic data for the memory benchmark: learnings written in a made-up vocabulary with a
// skewed word frequency (a few words in most rows, most words in few), and queries that hit
// rare, common, absent and mixed words, plus hostile input.
import type { NewLearning } from './memory-store.ts';
import { LEARNING_TYPES } from './memory-schema.ts';

/** Small, fast, seeded PRNG (mulberry32): the same seed gives the same data on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ven', 'tor', 'sa', 'ri', 'ne', 'po', 'du', 'xe', 'ghi', 'fa', 'zu', 'bre', 'qua'];
const VOCABULARY_SIZE = 4_000;

function vocabulary(random: () => number): string[] {
  const words = new Set<string>();
  while (words.size < VOCABULARY_SIZE) {
    const length = 2 + Math.floor(random() * 3);
    let word = '';
    for (let i = 0; i < length; i++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(word);
  }
  return [...words];
}

export interface BenchData {
  learnings: NewLearning[];
  queries: string[];
}

export function generateBenchData(count: number, seed = 42): BenchData {
  const random = seededRandom(seed);
  const words = vocabulary(random);
  // u^3 skews picks towards the start of the list: word 0 is in most rows, word 3999 in few.
  const pick = () => words[Math.floor(words.length * random() ** 3)]!;
  const seen = new Set<string>();
  const learnings: NewLearning[] = [];
  const start = Date.UTC(2025, 0, 1);
  while (learnings.length < count) {
    const length = 6 + Math.floor(random() * 14);
    const content = Array.from({ length }, pick).join(' ');
    if (seen.has(content)) continue;
    seen.add(content);
    learnings.push({
      type: LEARNING_TYPES[Math.floor(random() * LEARNING_TYPES.length)]!,
      content,
      createdAt: start + learnings.length * 60_000,
      sessionId: `s${Math.floor(learnings.length / 50)}`,
      confidence: Math.round(random() * 100) / 100,
    });
  }
  const at = (fraction: number) => words[Math.floor(words.length * fraction)]!;
  const queries = [
    ...[0.6, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999].map(at), // rare words
    ...[0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55].map(at), // middling words
    ...[0, 0.001, 0.01, 0.05].map(at), // common words: thousands of matches to rank
    ...[
      [0.3, 0.6],
      [0.1, 0.2],
      [0.5, 0.9],
      [0.05, 0.7],
      [0.4, 0.45],
    ].map(([a, b]) => `${at(a!)} ${at(b!)}`), // two words, some with no row holding both
    `${at(0.2)} ${at(0.3)} ${at(0.4)}`,
    'zzzznotaword',
    'nothing here matches',
    '',
    '"',
    'AND OR (',
    '*',
    'NEAR(',
  ];
  return { learnings, queries };
}
