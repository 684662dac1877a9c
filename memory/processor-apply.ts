// Writing a good reply: each learning, action and file line checked for whose words it carries
// (provenance.ts), the memory files first, then memory.db in one transaction, then the batch's
// observations marked processed.
import { messageOf } from './db-errors.ts';
import type { MemoryFileName } from './memory-files.ts';
import type { MemoryStore, NewLearning, NewPendingAction, PendingAction } from './memory-store.ts';
import { attribute, batchTexts, markedLines, type BatchTexts } from './provenance.ts';
import type { FileUpdate, ParsedReply } from './processor-reply.ts';
import type { MemoryFiles } from './stack-files.ts';
import type { Observation, TranscriptStore } from './transcript-store.ts';

/** The memory files and open actions as one batch's prompt showed them. */
export interface ShownMemory {
  files: { name: MemoryFileName; content: string | undefined }[];
  actions: PendingAction[];
}

/** A batch whose reply was written. */
export interface ProcessedBatch {
  status: 'processed';
  observations: number;
  learnings: number;
  actions: number;
  files: MemoryFileName[];
  /** Set when the work is saved but marking observations processed failed (repaired next run). */
  warning?: string;
}

/** Where a reply is written, and what the model may rewrite. */
export interface ReplyTarget {
  transcript: TranscriptStore;
  memory: MemoryStore;
  files: MemoryFiles;
  model: string;
  writable: readonly MemoryFileName[];
}

/** What memory already holds from read content, as the model saw it in the prompt. */
function rememberedContent(shown: ShownMemory): { label: string; text: string }[] {
  const remembered = shown.actions.flatMap((action) => (action.source === 'content' ? [{ label: action.sourceLabel ?? 'read content', text: action.content }] : []));
  for (const file of shown.files) remembered.push(...markedLines(file.content ?? ''));
  return remembered;
}

/** Writes what `reply` says of `batch`; throws when memory cannot be written (the batch then stays unprocessed). */
export async function applyReply(target: ReplyTarget, batch: Observation[], reply: Extract<ParsedReply, { ok: true }>, startedAt: number, shown: ShownMemory): Promise<ProcessedBatch> {
  const { model, writable } = target;
  const ids = batch.map((obs) => obs.id);
  const inBatch = new Map(batch.map((obs) => [obs.id, obs]));
  // The whole batch is compared, not only the observation the model cited: a citation is the
  // model's word, and a document that steers the model can steer that too.
  const texts = batchTexts(batch, rememberedContent(shown));
  const sessionId = batch.at(-1)!.sessionId;
  const learnings: NewLearning[] = reply.learnings.map((learning) => {
    const cited = learning.observationId === null ? undefined : inBatch.get(learning.observationId);
    const provenance = attribute(learning.content, texts);
    return {
      // A rule, a preference or a habit is the user's; read content can only state a fact.
      type: provenance.source === 'content' && learning.type !== 'tool_install' ? 'fact' : learning.type,
      content: learning.content,
      sessionId: cited?.sessionId ?? sessionId,
      sourceObservationId: cited?.id ?? null,
      confidence: learning.confidence,
      source: provenance.source,
      sourceLabel: provenance.label,
    };
  });
  const actions: NewPendingAction[] = reply.actions.map((action) => {
    const provenance = attribute(action.content, texts);
    return { ...action, source: provenance.source, sourceLabel: provenance.label };
  });
  const updates: FileUpdate[] = [];
  for (const update of reply.fileUpdates) {
    if (!writable.includes(update.name)) continue;
    const guarded = guardFileUpdate(update, shown.files.find((file) => file.name === update.name)?.content ?? '', texts);
    if (guarded.update) updates.push(guarded.update);
    for (const held of guarded.held) {
      learnings.push({ type: 'fact', content: held.line, sessionId, sourceObservationId: null, confidence: null, source: 'content', sourceLabel: held.label });
    }
  }
  // Files first: if the database write then fails, the retried batch sees the new files and
  // rewrites them again, which is harmless; the reverse order could lose a rewrite.
  for (const update of updates) await target.files.write(update.name, update.content);
  const written = await target.memory.writeBatch({
    learnings,
    actions,
    doneActionIds: reply.doneActionIds,
    run: { startedAt, model, observationIds: ids, status: 'ok', filesUpdated: updates.map((u) => u.name) },
  });
  const outcome: ProcessedBatch = {
    status: 'processed',
    observations: ids.length,
    learnings: written.learningsAdded,
    actions: written.actionsAdded,
    files: updates.map((u) => u.name),
  };
  try {
    await target.transcript.markProcessed(ids);
  } catch (error) {
    outcome.warning = `learned, but marking observations processed failed (repaired on the next run): ${messageOf(error)}`;
  }
  return outcome;
}

/** Files whose every line the agent takes as the user's rule or its own character. */
const RULE_FILES: readonly MemoryFileName[] = ['soul.md', 'os.md', 'user.md'];

/**
 * Checks the lines a rewrite adds. In soul.md, os.md and user.md a line worded from read content
 * is held out of the file (it comes back as a learning with its source); in the other files it
 * stays, marked with where it came from. A rewrite left with nothing new is dropped.
 */
export function guardFileUpdate(update: FileUpdate, previous: string, texts: BatchTexts): { update: FileUpdate | null; held: { line: string; label: string }[] } {
  const before = new Set(previous.split(/\r?\n/).map((line) => line.trim()));
  const held: { line: string; label: string }[] = [];
  const lines: string[] = [];
  for (const line of update.content.split('\n')) {
    const trimmed = line.trim();
    const provenance = trimmed === '' || before.has(trimmed) || /^#{1,6}\s|^<!--/.test(trimmed) ? null : attribute(trimmed, texts);
    if (provenance?.source !== 'content') lines.push(line);
    else if (RULE_FILES.includes(update.name)) held.push({ line: trimmed.replace(/^[-*+]\s+/, ''), label: provenance.label });
    else lines.push(`${line} (from ${provenance.label})`);
  }
  const content = lines.join('\n');
  const unchanged = content.trim() === previous.trim();
  return { update: unchanged || content.trim() === '' ? null : { name: update.name, content }, held };
}
