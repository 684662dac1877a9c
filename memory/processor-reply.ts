// Parses the processor model's reply (the format is taught in processor-prompt.ts and README.md).
// All or nothing: any structural problem makes the whole reply malformed, so nothing is written
// and the batch is retried later.
import { countLines, MEMORY_FILES, type MemoryFileName } from './memory-files.ts';
import { ACTION_PRIORITIES, type ActionPriority, type LearningType } from './memory-schema.ts';

export interface ParsedLearning {
  type: LearningType;
  content: string;
  /** The observation the model cited with `#id`, if any. */
  observationId: number | null;
  confidence: number | null;
}

export interface ParsedAction {
  content: string;
  priority: ActionPriority;
}

export interface FileUpdate {
  name: MemoryFileName;
  content: string;
}

export type ParsedReply =
  | {
      ok: true;
      learnings: ParsedLearning[];
      actions: ParsedAction[];
      doneActionIds: number[];
      fileUpdates: FileUpdate[];
      /** The model said NONE (and nothing else). */
      none: boolean;
      /** Lines that were neither items nor blocks (chatter); kept for the run log. */
      ignored: string[];
    }
  | { ok: false; error: string };

const LEARNING_KEYWORDS: Record<string, LearningType> = {
  FACT: 'fact',
  PATTERN: 'pattern',
  CORRECTION: 'correction',
  PREFERENCE: 'preference',
  TOOL_INSTALL: 'tool_install',
};

const FILE_BY_KEYWORD = new Map<string, (typeof MEMORY_FILES)[number]>(MEMORY_FILES.map((file) => [file.updateKeyword, file]));

/** `KEYWORD (qualifiers): text` after an optional list marker or bold markup. */
const ITEM = /^(?:[-*+]\s+|\d+[.)]\s+)?\**([A-Z][A-Z_]*)\**\s*(?:\(([^)]*)\))?\s*:\**\s*(.*)$/;
const UPDATE = /^(?:[-*+]\s+)?\**([A-Z]+_MD_UPDATE)\**\s*:?\s*$/;
const BEGIN = /^<<<BEGIN ([\w.-]+)>>>\s*$/;
const END = /^<<<END ([\w.-]+)>>>\s*$/;

export function parseProcessorReply(reply: string): ParsedReply {
  const lines = unwrapFence(reply).replace(/\r\n/g, '\n').split('\n');
  const result = { learnings: [] as ParsedLearning[], actions: [] as ParsedAction[], doneActionIds: [] as number[], fileUpdates: [] as FileUpdate[] };
  const ignored: string[] = [];
  let none = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    if (/^\**NONE\**\.?$/.test(line)) {
      none = true;
      continue;
    }
    const update = UPDATE.exec(line);
    if (update) {
      const block = readBlock(lines, i, update[1]!);
      if (typeof block === 'string') return { ok: false, error: block };
      if (result.fileUpdates.some((u) => u.name === block.update.name)) {
        return { ok: false, error: `${block.update.name} is rewritten twice in one reply` };
      }
      result.fileUpdates.push(block.update);
      i = block.end;
      continue;
    }
    if (BEGIN.test(line) || END.test(line)) return { ok: false, error: `line ${i + 1}: "${line}" outside a *_MD_UPDATE block` };
    const item = ITEM.exec(line);
    if (!item || !(item[1]! in LEARNING_KEYWORDS || item[1] === 'ACTION' || item[1] === 'ACTION_DONE')) {
      ignored.push(line);
      continue;
    }
    const [, keyword, qualifiers = '', text = ''] = item;
    const content = text.trim();
    if (!content) return { ok: false, error: `line ${i + 1}: ${keyword} has no text` };
    const problem = addItem(result, keyword!, qualifiers, content);
    if (problem) return { ok: false, error: `line ${i + 1}: ${problem}` };
  }
  const items = result.learnings.length + result.actions.length + result.doneActionIds.length + result.fileUpdates.length;
  if (items === 0 && !none) {
    return { ok: false, error: 'no FACT, PATTERN, CORRECTION, PREFERENCE, TOOL_INSTALL, ACTION, *_MD_UPDATE or NONE line found' };
  }
  return { ok: true, ...result, none: none && items === 0, ignored };
}

function addItem(
  result: { learnings: ParsedLearning[]; actions: ParsedAction[]; doneActionIds: number[] },
  keyword: string,
  qualifiers: string,
  content: string,
): string | undefined {
  const tokens = qualifiers.split(/[,\s]+/).filter(Boolean);
  if (keyword === 'ACTION_DONE') {
    const id = Number.parseInt(content.replace(/^#/, ''), 10);
    if (!Number.isInteger(id) || id <= 0) return `ACTION_DONE needs a pending action id, got "${content}"`;
    result.doneActionIds.push(id);
    return undefined;
  }
  if (keyword === 'ACTION') {
    const priority = tokens.map((t) => t.toLowerCase()).find((t): t is ActionPriority => (ACTION_PRIORITIES as readonly string[]).includes(t));
    result.actions.push({ content, priority: priority ?? 'normal' });
    return undefined;
  }
  let observationId: number | null = null;
  let confidence: number | null = null;
  for (const token of tokens) {
    if (/^#\d+$/.test(token)) observationId = Number(token.slice(1));
    else if (/^(0(\.\d+)?|1(\.0+)?)$/.test(token)) confidence = Number(token);
  }
  result.learnings.push({ type: LEARNING_KEYWORDS[keyword]!, content, observationId, confidence });
  return undefined;
}

/** Reads `<<<BEGIN name>>>` ... `<<<END name>>>` after an update keyword at `start`. */
function readBlock(lines: string[], start: number, keyword: string): { update: FileUpdate; end: number } | string {
  const spec = FILE_BY_KEYWORD.get(keyword);
  if (!spec) return `${keyword} names no memory file (known: ${MEMORY_FILES.map((f) => f.updateKeyword).join(', ')})`;
  let i = start + 1;
  while (i < lines.length && lines[i]!.trim() === '') i++;
  const begin = BEGIN.exec(lines[i]?.trim() ?? '');
  if (!begin || begin[1] !== spec.name) return `${keyword} must be followed by a line <<<BEGIN ${spec.name}>>>`;
  const body: string[] = [];
  for (let j = i + 1; j < lines.length; j++) {
    const end = END.exec(lines[j]!.trim());
    if (!end) {
      body.push(lines[j]!);
      continue;
    }
    if (end[1] !== spec.name) return `<<<END ${end[1]}>>> closes the block of ${spec.name}`;
    const content = `${body.join('\n').replace(/\s+$/, '')}\n`;
    if (content.trim() === '') return `${keyword} would leave ${spec.name} empty`;
    const lineCount = countLines(content);
    if (lineCount > spec.maxLines) return `${spec.name} update has ${lineCount} lines; its limit is ${spec.maxLines}`;
    return { update: { name: spec.name, content }, end: j };
  }
  return `${spec.name} update has no <<<END ${spec.name}>>> line (reply cut off?)`;
}

/** A reply wrapped whole in a code fence is unwrapped; fences inside file content stay. */
function unwrapFence(reply: string): string {
  const match = /^\s*```[\w-]*\n([\s\S]*?)\n```\s*$/.exec(reply);
  return match ? match[1]! : reply;
}
