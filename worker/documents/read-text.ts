// A text file: read as it is (UTF-8, or UTF-16 with its byte-order mark).
import type { DocumentRecord } from '../../memory/index.ts';
import { textEncoding } from '../file-kind.ts';
import { pageArtifactPath, type ReadingContext } from './reading.ts';

export async function readText(ctx: ReadingContext, record: DocumentRecord) {
  const bytes = await ctx.deps.files.read(record.path);
  // UTF-16 files (with their byte-order mark) are text too; the upload checks let only text in.
  const text = new TextDecoder(textEncoding(bytes) ?? 'utf-8').decode(bytes);
  await ctx.deps.files.write(pageArtifactPath(record.id, 1), text);
  const first = text.split('\n').map((line) => line.trim()).find(Boolean) ?? '';
  await ctx.update(record.id, { status: 'ready', pageCount: 1, description: `${record.description}${first ? `, begins "${first.slice(0, 80)}"` : ''}` });
}
