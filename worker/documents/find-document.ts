// The stack's documents as the agent names them: by id, path or file name, and the short list a
// turn's context carries.
import type { DocumentRecord, StackMemory } from '../../memory/index.ts';

/** A document by its id, its path (with or without /workspace/) or its file name. */
export async function findDocument(memory: StackMemory, nameOrId: string): Promise<DocumentRecord | undefined> {
  const wanted = nameOrId.trim().replace(/^\/?workspace\//, '');
  const byId = await memory.documents.getDocument(wanted);
  if (byId) return byId;
  const all = await memory.documents.listDocuments(1000);
  return all.find((doc) => doc.path === wanted || doc.filename === wanted || doc.path === `documents/${wanted}`);
}

/** The documents the agent should know of, newest first (a turn's context stays short). */
export async function attachmentIndex(memory: StackMemory): Promise<string> {
  try {
    const documents = await memory.documents.listDocuments(50);
    return documents.map((doc) => `- ${doc.filename} (${doc.mime}, ${doc.status}) at ${doc.path}: ${doc.description}`).join('\n');
  } catch {
    return '';
  }
}
