// The linear-time matcher against V8's own engine over random patterns and inputs: whatever it
// accepts, it matches exactly where RegExp does; whatever it refuses, it refuses with a
// RulePatternError. Inputs stay short so V8's backtracking answers in time.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileLinear, RulePatternError } from './linear-regex.ts';

const piece = fc.constantFrom(
  'a', 'b', ' ', '-', '.', '^', '$', '|', '(', ')', '(?:', '*', '+', '?', '*?', '{2}', '{1,3}', '{2,}', '{',
  '}', '[ab]', '[^a]', '[a-c]', '[\\s-]', '[\\b]', '[]', '[^]', '\\d', '\\w', '\\s', '\\S', '\\b', '\\B', '\\.', '\\-', '\\x61', '\\u0062', '\\1', '(?=a)', '(?<n>', ']',
);
const pattern = fc.array(piece, { minLength: 1, maxLength: 8 }).map((parts) => parts.join(''));
const input = fc.array(fc.constantFrom('a', 'b', 'c', ' ', '-', '1', '_', '\n', '.', 'é'), { maxLength: 12 }).map((chars) => chars.join(''));

describe('the linear-time matcher, on random patterns', () => {
  it('matches where RegExp matches, or refuses the pattern with a reason', () => {
    fc.assert(
      fc.property(pattern, fc.array(input, { minLength: 1, maxLength: 6 }), (source, texts) => {
        let native: RegExp;
        try {
          native = new RegExp(source);
        } catch {
          expect(() => compileLinear(source)).toThrow(RulePatternError);
          return;
        }
        let linear;
        try {
          linear = compileLinear(source);
        } catch (error) {
          expect(error).toBeInstanceOf(RulePatternError);
          return;
        }
        for (const text of texts) expect(linear.test(text), `/${source}/ on ${JSON.stringify(text)}`).toBe(native.test(text));
      }),
      { numRuns: 3_000 },
    );
  });
});
