import { describe, expect, it } from 'vitest';
import { compileLinear, MAX_PROGRAM, RulePatternError } from './linear-regex.ts';

const PATTERNS = [
  'curl',
  '^rm\\b',
  '\\bsudo\\s+',
  'rm\\s+-\\S*r',
  'git push( --force| -f)',
  '(?:wget|curl)\\s+https?://',
  '^(ls|cat)$',
  'a.c',
  '[^a-z]x',
  '[a-c\\d_-]+!',
  '[\\w.]+@[\\w.]+',
  'x{2,3}y',
  'x{2}',
  'x{2,}z',
  'ab*?c',
  '(?<verb>get|put) /',
  '\\x41\\u0042[\\b]?',
  'a{,3}',
  '\\.\\*\\(',
  '\\Bb\\B',
  '$^',
  'colou?r',
  '(a|)+b',
  '(a*)*c',
  '[\\d-z]',
  '[-x]y',
  'tab\\there',
  '\\cJ',
];

const INPUTS = [
  '',
  'curl https://example.com',
  'rm -rf build',
  'sudo  apt-get install x',
  'git push --force origin main',
  'wget http://x.example/a',
  'ls',
  'lsx',
  'abc a\nc',
  'Ax 1x',
  'aa_b-c9!',
  'me@example.org',
  'xxxy xxy xy',
  'xx xxxxz',
  'abbbbc ac',
  'get / put /x',
  'AB\b',
  'a{,3}',
  'x.*(',
  'abba',
  'color colour',
  'aaab',
  'aaac',
  '5 - z',
  'xy -y',
  'tab\there',
  'line\nnext',
];

describe('the linear-time matcher', () => {
  it('matches exactly what JavaScript matches', () => {
    for (const pattern of PATTERNS) {
      const linear = compileLinear(pattern);
      const native = new RegExp(pattern);
      for (const input of INPUTS) expect(linear.test(input), `/${pattern}/ on ${JSON.stringify(input)}`).toBe(native.test(input));
    }
  });

  it('finishes at once on patterns that make a backtracking engine take exponential time', () => {
    const long = `${'a'.repeat(100_000)}!`;
    for (const pattern of ['(a+)+$', '^(a|a)*$', '(a|aa)+$', '^(\\w+\\s?)*$', '(.*a){20}$', '^(a?){30}a{30}$']) {
      const started = performance.now();
      expect(compileLinear(pattern).test(long), pattern).toBe(false);
      expect(performance.now() - started, pattern).toBeLessThan(2_000);
    }
    expect(compileLinear('(a+)+$').test('a'.repeat(30))).toBe(true);
    // The largest pattern a rule may have, every one of its threads alive: ~0.2 s for 20,000
    // characters (a backtracking engine would not finish). The limit leaves room for a busy machine.
    const largest = compileLinear('(.*a){124}$');
    const started = performance.now();
    expect(largest.test(long.slice(-20_000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('refuses, with the reason, what no linear-time engine runs', () => {
    const refusal = (pattern: string) => {
      try {
        compileLinear(pattern);
        return null;
      } catch (error) {
        expect(error).toBeInstanceOf(RulePatternError);
        return (error as Error).message;
      }
    };
    expect(refusal('(a)\\1')).toMatch(/cannot use a backreference \("\\1"\)/);
    expect(refusal('(?<x>a)\\k<x>')).toMatch(/named backreference/);
    expect(refusal('rm(?=\\s)')).toMatch(/cannot use lookaround \("\(\?="\)/);
    expect(refusal('(?<!x)rm')).toMatch(/lookaround \("\(\?<!"\)/);
    expect(refusal('\\p{L}')).toMatch(/"\\p"/);
    expect(refusal('(')).toMatch(/^The command pattern is not a valid regular expression/);
    expect(refusal('a{1001}')).toMatch(/repeat count above 1000/);
    expect(refusal('(abc){200}')).toContain(`more than ${MAX_PROGRAM} steps`);
    // Repeats of nothing, nested: nothing to emit, a billion steps to walk.
    const started = performance.now();
    expect(refusal('(((?:){1000}){1000}){1000}')).toContain(`more than ${MAX_PROGRAM} steps`);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(refusal(`${'a'.repeat(501)}`)).toBe('The command pattern is longer than 500 characters.');
  });
});
