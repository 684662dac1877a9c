// A matcher for the command patterns of rules that are not built in, whose time grows with the
// command's length only (a Thompson NFA run as a Pike VM, as RE2 does): V8's backtracking engine
// takes exponential time on patterns like `(a+)+$`, and a rule a stack brought with it runs on
// every shell command. It accepts the part of JavaScript's syntax that such an engine can run.

/** A pattern a rule cannot use, with the reason worded for the user. */
export class RulePatternError extends Error {}

export interface LinearRegex {
  /** Whether the pattern matches anywhere in `text` (RegExp.prototype.test without flags). */
  test(text: string): boolean;
}

/**
 * Past this many steps a pattern is refused: the time per character grows with it (the largest,
 * on the longest command a tool takes, 100,000 characters, about half a second).
 */
export const MAX_PROGRAM = 500;
const MAX_COUNT = 1_000;
/** A rule's pattern is at most this long (ruleSchema); repeats of nothing are still walked, so this bounds them. */
const MAX_PATTERN = 500;
const MAX_WALK = MAX_PROGRAM * 20;

type CharTest = (code: number) => boolean;
type Node =
  | { kind: 'char'; test: CharTest }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number; max: number }
  | { kind: 'assert'; what: '^' | '$' | 'b' | 'B' };

type Op =
  | { op: 'char'; test: CharTest; ascii: Uint8Array; next: number }
  | { op: 'split'; a: number; b: number }
  | { op: 'jmp'; to: number }
  | { op: 'assert'; what: '^' | '$' | 'b' | 'B'; next: number }
  | { op: 'match' };

const isDigit: CharTest = (c) => c >= 48 && c <= 57;
const isWord: CharTest = (c) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
// JavaScript's \s: WhiteSpace and LineTerminator.
const SPACES = new Set([9, 10, 11, 12, 13, 32, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff]);
const isSpace: CharTest = (c) => SPACES.has(c) || (c >= 0x2000 && c <= 0x200a);
const isLineEnd: CharTest = (c) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
const not = (test: CharTest): CharTest => (c) => !test(c);
const CLASS_ESCAPES: Record<string, CharTest> = { d: isDigit, D: not(isDigit), w: isWord, W: not(isWord), s: isSpace, S: not(isSpace) };
const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

/**
 * Compiles a pattern, or throws RulePatternError saying what a rule may not use: backreferences
 * and lookaround (no linear-time engine runs them), flags-changing groups, and patterns too large.
 * The pattern must also be a valid JavaScript regular expression, which it matches exactly as.
 */
export function compileLinear(pattern: string): LinearRegex {
  if (pattern.length > MAX_PATTERN) throw new RulePatternError(`The command pattern is longer than ${MAX_PATTERN} characters.`);
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new RulePatternError(`The command pattern is not a valid regular expression: ${(error as Error).message}`);
  }
  const program = compile(new Parser(pattern).parse());
  return { test: (text) => run(program, text) };
}

class Parser {
  private at = 0;
  constructor(private readonly source: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.at < this.source.length) this.fail(`an unmatched ")" at character ${this.at + 1}`);
    return node;
  }

  private fail(what: string): never {
    throw new RulePatternError(`A rule's command pattern cannot use ${what}: rules run their patterns with an engine whose time cannot blow up, which has no backtracking.`);
  }

  private peek(offset = 0): string | undefined {
    return this.source[this.at + offset];
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.peek() === '|') {
      this.at++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0]! : { kind: 'alt', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.at < this.source.length && this.peek() !== '|' && this.peek() !== ')') {
      const atom = this.atom();
      items.push(this.quantified(atom));
    }
    return { kind: 'seq', items };
  }

  private quantified(atom: Node): Node {
    const c = this.peek();
    let bounds: [number, number] | null = null;
    if (c === '*') bounds = [0, Infinity];
    else if (c === '+') bounds = [1, Infinity];
    else if (c === '?') bounds = [0, 1];
    if (bounds) this.at++;
    else if (c === '{') {
      const braces = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.at));
      if (!braces) return atom; // a literal "{", as JavaScript reads it
      const min = Number(braces[1]);
      const max = braces[2] === undefined ? min : braces[3] === '' ? Infinity : Number(braces[3]);
      if (min > MAX_COUNT || (max !== Infinity && max > MAX_COUNT)) this.fail(`a repeat count above ${MAX_COUNT}`);
      bounds = [min, max];
      this.at += braces[0].length;
    } else return atom;
    if (this.peek() === '?') this.at++; // lazy or greedy: the same strings match
    return { kind: 'repeat', node: atom, min: bounds[0], max: bounds[1] };
  }

  private atom(): Node {
    const c = this.source[this.at++]!;
    switch (c) {
      case '(':
        return this.group();
      case '[':
        return this.charClass();
      case '.':
        return { kind: 'char', test: not(isLineEnd) };
      case '^':
        return { kind: 'assert', what: '^' };
      case '$':
        return { kind: 'assert', what: '$' };
      case '\\':
        return this.escape();
      default:
        return literal(c.charCodeAt(0));
    }
  }

  private group(): Node {
    if (this.peek() === '?') {
      const head = this.source.slice(this.at, this.at + 3);
      if (head.startsWith('?:')) this.at += 2;
      else if (head.startsWith('?<') && head !== '?<=' && head !== '?<!') this.at = this.source.indexOf('>', this.at) + 1;
      else if (/^\?(=|!|<=|<!)/.test(head)) this.fail(`lookaround ("(${/^\?(=|!|<=|<!)/.exec(head)![0]}")`);
      else this.fail(`"(${head}" (a group that changes flags)`);
    }
    const node = this.alternation();
    if (this.source[this.at++] !== ')') this.fail('an unclosed "("');
    return node;
  }

  private escape(): Node {
    const c = this.source[this.at++];
    if (c === undefined) this.fail('a "\\" at the end');
    if (c === 'b' || c === 'B') return { kind: 'assert', what: c };
    const code = this.escapedChar(c, false);
    return typeof code === 'number' ? literal(code) : { kind: 'char', test: code };
  }

  /** The character (or class) after a "\" that has been read as `c`. */
  private escapedChar(c: string, inClass: boolean): number | CharTest {
    if (CLASS_ESCAPES[c]) return CLASS_ESCAPES[c];
    if (CONTROL_ESCAPES[c] !== undefined) return CONTROL_ESCAPES[c];
    if (inClass && c === 'b') return 8;
    if (c === '0' && !isDigit(this.source.charCodeAt(this.at))) return 0;
    if (/[1-9]/.test(c)) this.fail(`a backreference ("\\${c}")`);
    if (c === 'k' && this.peek() === '<') this.fail('a named backreference ("\\k<…>")');
    if (c === 'x' || c === 'u') {
      const digits = c === 'x' ? 2 : 4;
      const hex = this.source.slice(this.at, this.at + digits);
      if (new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) {
        this.at += digits;
        return parseInt(hex, 16);
      }
    }
    if (c === 'c' && /[A-Za-z]/.test(this.peek() ?? '')) return this.source.charCodeAt(this.at++) % 32;
    if (/[A-Za-z0-9]/.test(c)) this.fail(`"\\${c}" (an escape whose meaning depends on the engine; write the character itself)`);
    return c.charCodeAt(0);
  }

  private charClass(): Node {
    const negated = this.peek() === '^';
    if (negated) this.at++;
    const parts: CharTest[] = [];
    while (this.peek() !== ']') {
      if (this.at >= this.source.length) this.fail('an unclosed "["');
      const low = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined && typeof low === 'number') {
        this.at++;
        const high = this.classAtom();
        if (typeof high === 'number') {
          parts.push((c) => c >= low && c <= high);
          continue;
        }
        // "[a-\d]": JavaScript reads the "-" as itself.
        parts.push((c) => c === low || c === 45, high);
        continue;
      }
      parts.push(typeof low === 'number' ? (c) => c === low : low);
    }
    this.at++;
    const any: CharTest = (c) => parts.some((part) => part(c));
    return { kind: 'char', test: negated ? not(any) : any };
  }

  private classAtom(): number | CharTest {
    const c = this.source[this.at++]!;
    return c === '\\' ? this.escapedChar(this.source[this.at++] ?? '', true) : c.charCodeAt(0);
  }
}

const literal = (code: number): Node => ({ kind: 'char', test: (c) => c === code });

function compile(root: Node): Op[] {
  const program: Op[] = [];
  const tooLarge = () =>
    new RulePatternError(`The command pattern is too large for a rule (more than ${MAX_PROGRAM} steps once its repeats are written out): shorten it or lower its repeat counts.`);
  const emit = (op: Op) => {
    if (program.length >= MAX_PROGRAM) throw tooLarge();
    program.push(op);
    return program.length - 1;
  };
  // Repeats of what matches nothing ("(?:){1000}") emit nothing, but walking them still takes time.
  let walked = 0;
  // Each emitter leaves its last ops pointing at program.length, patched by the caller's order.
  const walk = (node: Node): void => {
    if (++walked > MAX_WALK) throw tooLarge();
    switch (node.kind) {
      case 'char':
        emit({ op: 'char', test: node.test, ascii: asciiTable(node.test), next: program.length + 1 });
        return;
      case 'assert':
        emit({ op: 'assert', what: node.what, next: program.length + 1 });
        return;
      case 'seq':
        for (const item of node.items) walk(item);
        return;
      case 'alt': {
        const jumps: number[] = [];
        node.options.forEach((option, i) => {
          if (i < node.options.length - 1) {
            const split = emit({ op: 'split', a: program.length + 1, b: -1 });
            walk(option);
            jumps.push(emit({ op: 'jmp', to: -1 }));
            (program[split] as { b: number }).b = program.length;
          } else walk(option);
        });
        for (const at of jumps) (program[at] as { to: number }).to = program.length;
        return;
      }
      case 'repeat': {
        for (let i = 0; i < node.min; i++) walk(node.node);
        if (node.max === Infinity) {
          const split = emit({ op: 'split', a: program.length + 1, b: -1 });
          walk(node.node);
          emit({ op: 'jmp', to: split });
          (program[split] as { b: number }).b = program.length;
          return;
        }
        const splits: number[] = [];
        for (let i = node.min; i < node.max; i++) {
          splits.push(emit({ op: 'split', a: program.length + 1, b: -1 }));
          walk(node.node);
        }
        for (const at of splits) (program[at] as { b: number }).b = program.length;
        return;
      }
    }
  };
  walk(root);
  emit({ op: 'match' });
  return program;
}

/** The test's answers for ASCII, read from a table: most of a command's characters are ASCII. */
function asciiTable(test: CharTest): Uint8Array {
  const table = new Uint8Array(128);
  for (let code = 0; code < 128; code++) table[code] = test(code) ? 1 : 0;
  return table;
}

/** Every thread of the program advances one character at a time: no position is read twice. */
function run(program: Op[], text: string): boolean {
  const seen = new Int32Array(program.length).fill(-1);
  // Each op is followed once per position and pushes at most two others.
  const stack = new Int32Array(program.length * 2 + 1);
  let current = new Int32Array(program.length);
  let next = new Int32Array(program.length);
  let currentSize = 0;
  let nextSize = 0;
  let generation = 0;
  const wordAt = (pos: number) => pos >= 0 && pos < text.length && isWord(text.charCodeAt(pos));
  // Follows jumps, splits and assertions from `start` at `pos`, adding the char ops it reaches to
  // `list`; true when the match is reached.
  const add = (list: Int32Array, size: number, start: number, pos: number): number => {
    let top = 0;
    stack[top++] = start;
    while (top > 0) {
      const pc = stack[--top]!;
      if (seen[pc] === generation) continue;
      seen[pc] = generation;
      const op = program[pc]!;
      switch (op.op) {
        case 'match':
          return -1;
        case 'char':
          list[size++] = pc;
          break;
        case 'jmp':
          stack[top++] = op.to;
          break;
        case 'split':
          stack[top++] = op.b;
          stack[top++] = op.a;
          break;
        case 'assert': {
          const holds =
            op.what === '^' ? pos === 0 : op.what === '$' ? pos === text.length : (wordAt(pos - 1) !== wordAt(pos)) === (op.what === 'b');
          if (holds) stack[top++] = op.next;
          break;
        }
      }
    }
    return size;
  };
  for (let pos = 0; ; pos++) {
    // A new attempt starts at every position (the search is not anchored); it joins the threads.
    currentSize = add(current, currentSize, 0, pos);
    if (currentSize < 0) return true;
    if (pos >= text.length) return false;
    const code = text.charCodeAt(pos);
    generation++;
    nextSize = 0;
    for (let i = 0; i < currentSize; i++) {
      const op = program[current[i]!] as Extract<Op, { op: 'char' }>;
      if (code < 128 ? op.ascii[code] === 1 : op.test(code)) {
        nextSize = add(next, nextSize, op.next, pos + 1);
        if (nextSize < 0) return true;
      }
    }
    [current, next] = [next, current];
    currentSize = nextSize;
  }
}
