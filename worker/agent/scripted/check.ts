// Validates a fake model script from untrusted JSON. Every problem is reported with its path,
// and unknown fields are rejected: a misspelt option silently ignored would make a test lie.
import type { FakeScript, StopReason } from './script.ts';

type Obj = Record<string, unknown>;

/** Thrown by parseScript; `problems` holds one "path: what is wrong" line per problem. */
export class ScriptError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid fake model script: ${problems.join('; ')}`);
    this.name = 'ScriptError';
    this.problems = problems;
  }
}

/** Returns the script typed, or throws ScriptError listing every problem. */
export function parseScript(value: unknown): FakeScript {
  const problems = checkScript(value);
  if (problems.length > 0) throw new ScriptError(problems);
  return value as FakeScript;
}

// A Record keyed by the type makes this list exhaustive against StopReason in both directions.
const STOP_REASONS: Record<StopReason, true> = {
  end_turn: true,
  tool_use: true,
  max_tokens: true,
  stop_sequence: true,
  pause_turn: true,
  refusal: true,
  model_context_window_exceeded: true,
};

/** Returns the problems in a script, empty when it is valid. Never throws. */
export function checkScript(value: unknown): string[] {
  const c = new Checker();
  const script = c.object(value, 'script');
  if (!script) return c.problems;
  c.onlyKeys(script, 'script', ['name', 'turns']);
  c.string(script, 'name', 'script', true);
  const turns = script['turns'];
  if (!Array.isArray(turns)) {
    c.add('script.turns', `expected an array of turns, got ${describe(turns)}`);
    return c.problems;
  }
  turns.forEach((turn, i) => checkTurn(c, turn, `script.turns[${i}]`));
  const forever = turns.findIndex((t) => isObj(t) && t['repeat'] === -1);
  if (forever !== -1 && forever < turns.length - 1) {
    c.add(`script.turns[${forever + 1}]`, `unreachable: turns[${forever}] repeats forever ("repeat": -1)`);
  }
  return c.problems;
}

function checkTurn(c: Checker, value: unknown, path: string): void {
  const turn = c.object(value, path);
  if (!turn) return;
  c.onlyKeys(turn, path, ['expect', 'reply', 'repeat']);
  const repeat = turn['repeat'];
  if (repeat !== undefined && !(repeat === -1 || (Number.isInteger(repeat) && (repeat as number) >= 1))) {
    c.add(`${path}.repeat`, `expected an integer >= 1, or -1 for forever, got ${describe(repeat)}`);
  }
  if (turn['expect'] !== undefined) checkExpect(c, turn['expect'], `${path}.expect`);
  const reply = c.object(turn['reply'], `${path}.reply`);
  if (!reply) return;
  if ('error' in reply) checkErrorReply(c, reply, `${path}.reply`);
  else if ('content' in reply) checkMessageReply(c, reply, `${path}.reply`);
  else c.add(`${path}.reply`, 'expected a message ({"content": [...]}) or an error ({"error": {...}})');
}

function checkMessageReply(c: Checker, reply: Obj, path: string): void {
  c.onlyKeys(reply, path, [
    'content',
    'stop_reason',
    'stop_sequence',
    'usage',
    'chunk_chars',
    'delay_ms',
    'hang_after_events',
    'break_after_events',
    'stream_error',
  ]);
  const content = reply['content'];
  if (!Array.isArray(content)) c.add(`${path}.content`, `expected an array of blocks, got ${describe(content)}`);
  else content.forEach((block, i) => checkBlock(c, block, `${path}.content[${i}]`));

  const stop = reply['stop_reason'];
  if (stop !== undefined && !(typeof stop === 'string' && stop in STOP_REASONS)) {
    c.add(`${path}.stop_reason`, `expected one of ${quoteAll(Object.keys(STOP_REASONS))}, got ${describe(stop)}`);
  }
  c.string(reply, 'stop_sequence', path, stop === 'stop_sequence');
  if (reply['stop_sequence'] !== undefined && stop !== 'stop_sequence') {
    c.add(`${path}.stop_sequence`, 'only allowed with "stop_reason": "stop_sequence"');
  }

  const usage = c.optionalObject(reply, 'usage', path);
  if (usage) {
    const at = `${path}.usage`;
    c.onlyKeys(usage, at, ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens']);
    c.integer(usage, 'input_tokens', at, 0, true);
    c.integer(usage, 'output_tokens', at, 0, true);
    c.integer(usage, 'cache_read_input_tokens', at, 0, false);
    c.integer(usage, 'cache_creation_input_tokens', at, 0, false);
  }
  c.integer(reply, 'chunk_chars', path, 1, false);
  c.number(reply, 'delay_ms', path);
  c.integer(reply, 'hang_after_events', path, 0, false);
  c.integer(reply, 'break_after_events', path, 0, false);
  const streamError = c.optionalObject(reply, 'stream_error', path);
  if (streamError) {
    const at = `${path}.stream_error`;
    c.onlyKeys(streamError, at, ['after_events', 'type', 'message']);
    c.integer(streamError, 'after_events', at, 0, true);
    c.string(streamError, 'type', at, false);
    c.string(streamError, 'message', at, false);
  }
  const endings = ['hang_after_events', 'break_after_events', 'stream_error'].filter((k) => reply[k] !== undefined);
  if (endings.length > 1) c.add(path, `${quoteAll(endings)} cannot be combined: a reply ends one way`);
}

function checkBlock(c: Checker, value: unknown, path: string): void {
  const block = c.object(value, path);
  if (!block) return;
  const type = block['type'];
  if (type === 'text') {
    c.onlyKeys(block, path, ['type', 'text']);
    c.string(block, 'text', path, true);
  } else if (type === 'tool_use') {
    c.onlyKeys(block, path, ['type', 'name', 'input', 'id']);
    c.string(block, 'name', path, true);
    c.string(block, 'id', path, false);
    const input = block['input'];
    if (!isObj(input)) c.add(`${path}.input`, `expected the tool's arguments as an object, got ${describe(input)}`);
  } else {
    c.add(`${path}.type`, `expected "text" or "tool_use", got ${describe(type)}`);
  }
}

function checkErrorReply(c: Checker, reply: Obj, path: string): void {
  c.onlyKeys(reply, path, ['error']);
  const at = `${path}.error`;
  const error = c.object(reply['error'], at);
  if (!error) return;
  c.onlyKeys(error, at, ['status', 'type', 'message', 'headers']);
  const status = error['status'];
  if (!(Number.isInteger(status) && (status as number) >= 400 && (status as number) <= 599)) {
    c.add(`${at}.status`, `expected an HTTP error status (integer 400-599), got ${describe(status)}`);
  }
  c.string(error, 'type', at, false);
  c.string(error, 'message', at, false);
  c.stringMap(error, 'headers', at, false);
}

function checkExpect(c: Checker, value: unknown, path: string): void {
  const expect = c.object(value, path);
  if (!expect) return;
  c.onlyKeys(expect, path, ['last_user_text', 'tool_result', 'system_contains', 'model', 'has_tools', 'headers']);
  c.string(expect, 'last_user_text', path, false);
  c.string(expect, 'system_contains', path, false);
  c.string(expect, 'model', path, false);
  const tools = expect['has_tools'];
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((t) => typeof t === 'string'))) {
    c.add(`${path}.has_tools`, `expected an array of tool names, got ${describe(tools)}`);
  }
  const result = c.optionalObject(expect, 'tool_result', path);
  if (result) {
    const at = `${path}.tool_result`;
    c.onlyKeys(result, at, ['tool_use_id', 'contains', 'is_error']);
    c.string(result, 'tool_use_id', at, false);
    c.string(result, 'contains', at, false);
    if (result['is_error'] !== undefined && typeof result['is_error'] !== 'boolean') {
      c.add(`${at}.is_error`, `expected a boolean, got ${describe(result['is_error'])}`);
    }
  }
  c.stringMap(expect, 'headers', path, true);
}

class Checker {
  readonly problems: string[] = [];

  add(path: string, message: string): void {
    this.problems.push(`${path}: ${message}`);
  }

  object(value: unknown, path: string): Obj | undefined {
    if (isObj(value)) return value;
    this.add(path, `expected an object, got ${describe(value)}`);
    return undefined;
  }

  optionalObject(obj: Obj, key: string, path: string): Obj | undefined {
    return obj[key] === undefined ? undefined : this.object(obj[key], `${path}.${key}`);
  }

  onlyKeys(obj: Obj, path: string, allowed: readonly string[]): void {
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key)) this.add(`${path}.${key}`, `unknown field (expected one of ${quoteAll(allowed)})`);
    }
  }

  string(obj: Obj, key: string, path: string, required: boolean): void {
    const value = obj[key];
    if (value === undefined && !required) return;
    if (typeof value !== 'string') this.add(`${path}.${key}`, `expected a string, got ${describe(value)}`);
  }

  integer(obj: Obj, key: string, path: string, min: number, required: boolean): void {
    const value = obj[key];
    if (value === undefined && !required) return;
    if (!(Number.isInteger(value) && (value as number) >= min)) {
      this.add(`${path}.${key}`, `expected an integer >= ${min}, got ${describe(value)}`);
    }
  }

  number(obj: Obj, key: string, path: string): void {
    const value = obj[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      this.add(`${path}.${key}`, `expected a number >= 0, got ${describe(value)}`);
    }
  }

  /** Header maps: string values, or null too when `nullable` (meaning "must be absent"). */
  stringMap(obj: Obj, key: string, path: string, nullable: boolean): void {
    if (obj[key] === undefined) return;
    const map = this.object(obj[key], `${path}.${key}`);
    if (!map) return;
    for (const [name, value] of Object.entries(map)) {
      if (typeof value === 'string' || (nullable && value === null)) continue;
      const wanted = nullable ? 'a string, or null for "absent"' : 'a string';
      this.add(`${path}.${key}.${name}`, `expected ${wanted}, got ${describe(value)}`);
    }
  }
}

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function quoteAll(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

/** A short description of a JSON value for messages: `a string ("abc")`, `an array`, `null`. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const shown = JSON.stringify(value);
  const short = shown.length > 40 ? `${shown.slice(0, 40)}...` : shown;
  return `${typeof value === 'number' ? 'a number' : typeof value === 'boolean' ? 'a boolean' : 'a string'} (${short})`;
}
