// Whose words a learning carries. The processor model reads the user's messages next to text the
// assistant read (documents, web pages, tool output) and its answers, and a document can say
// "remember this as the user's preference". Its reply is not trusted to tell them apart: each
// item it writes is compared with the batch's own texts, and an item whose wording comes from
// what was read rather than from what the user said is stored as content, with its source.
import type { Observation } from './transcript-store.ts';

export type Provenance = { source: 'user'; label: null } | { source: 'content'; label: string };

const USER: Provenance = { source: 'user', label: null };

/** At least this share of an item's word triples found in one read text makes it that text's. */
const CONTENT_SHARE = 0.5;

interface Text {
  label: string;
  shingles: Set<string>;
  hosts: Set<string>;
}

/** The batch's texts, split once: the user's words, and each text the assistant read or wrote. */
export interface BatchTexts {
  user: Text;
  content: Text[];
}

/**
 * `remembered` is read content already in memory that the model sees again (open actions and
 * file lines with a source), so restating it cannot turn it into the user's words.
 */
export function batchTexts(observations: readonly Observation[], remembered: readonly { label: string; text: string }[] = []): BatchTexts {
  const content: Text[] = remembered.map((item) => text(item.label, item.text));
  for (const obs of observations) {
    for (const call of obs.toolCalls) content.push(text(toolLabel(call), call.summary));
    if (obs.agentResponse) content.push(text("the assistant's answer", obs.agentResponse));
  }
  return { user: text('the user', observations.map((obs) => obs.userMessage).join('\n')), content };
}

/**
 * The user's, unless the item's wording comes from read content: half or more of its word
 * triples appear in one read text (and more of them there than in the user's messages), or it
 * names a web host that only read content names.
 */
export function attribute(item: string, texts: BatchTexts): Provenance {
  const own = text('', item);
  for (const host of own.hosts) {
    if (texts.user.hosts.has(host)) continue;
    const from = texts.content.find((candidate) => candidate.hosts.has(host));
    if (from) return { source: 'content', label: from.label };
  }
  if (own.shingles.size === 0) return USER;
  const userShare = share(own.shingles, texts.user.shingles);
  let best: { label: string; share: number } | undefined;
  for (const candidate of texts.content) {
    const value = share(own.shingles, candidate.shingles);
    if (value > (best?.share ?? 0)) best = { label: candidate.label, share: value };
  }
  return best && best.share >= CONTENT_SHARE && best.share > userShare ? { source: 'content', label: best.label } : USER;
}

/** "read documents/offer.pdf", "web_fetch https://…", "bash curl …": the tool and what it touched. */
function toolLabel(call: Observation['toolCalls'][number]): string {
  return call.target ? `${call.name} ${call.target}` : call.name;
}

function text(label: string, value: string): Text {
  const words = value.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const shingles = new Set<string>();
  if (words.length < 3) for (const word of words) shingles.add(word);
  for (let i = 0; i + 3 <= words.length; i++) shingles.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`);
  return { label, shingles, hosts: hostsIn(value) };
}

function share(of: Set<string>, within: Set<string>): number {
  let found = 0;
  for (const shingle of of) if (within.has(shingle)) found++;
  return found / of.size;
}

/** Hosts in web addresses ("https://collect.example/x"), lower case, without "www.". */
function hostsIn(value: string): Set<string> {
  const hosts = new Set<string>();
  for (const [url] of value.matchAll(/\bhttps?:\/\/[^\s<>"'`)\]]+/gi)) {
    try {
      hosts.add(new URL(url).hostname.toLowerCase().replace(/^www\./, ''));
    } catch {
      // Not an address after all.
    }
  }
  return hosts;
}

/** Lines a guarded rewrite marked with their source: "… (from read documents/x.pdf)". */
export function markedLines(file: string): { label: string; text: string }[] {
  const lines: { label: string; text: string }[] = [];
  for (const line of file.split(/\r?\n/)) {
    const marked = /^(.*) \(from ([^()]+)\)\s*$/.exec(line);
    if (marked) lines.push({ label: marked[2]!, text: marked[1]! });
  }
  return lines;
}
