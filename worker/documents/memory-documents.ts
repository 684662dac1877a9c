// Document records kept in a Map, for the pipeline's tests: what DocumentsStore does for the
// pipeline (read a record, patch it), without a database.
import type { DocumentRecord, DocumentsStore } from '../../memory/index.ts';

export function memoryDocuments(): { records: Map<string, DocumentRecord>; documents: Pick<DocumentsStore, 'getDocument' | 'updateDocument'> } {
  const records = new Map<string, DocumentRecord>();
  return {
    records,
    documents: {
      getDocument: async (id) => records.get(id),
      updateDocument: async (id, patch) => {
        const record = records.get(id);
        if (!record) return undefined;
        const next = { ...record, ...Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) };
        records.set(id, next);
        return next;
      },
    },
  };
}
