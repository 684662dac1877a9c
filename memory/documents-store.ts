// memory.db access for the document pipeline: one row per uploaded document, and the structured
// data extracted from it (fields and per-field confidence as JSON), newest extraction last.
import type { Database } from './database.ts';
import type { DocumentStatus, ExtractionStatus } from './memory-schema.ts';

export interface NewDocument {
  id: string;
  filename: string;
  /** Stack-relative, e.g. `documents/invoice.pdf`. Unique. */
  path: string;
  size: number;
  mime: string;
  description?: string;
  status?: DocumentStatus;
  pageCount?: number | null;
}

export interface DocumentRecord {
  id: string;
  filename: string;
  path: string;
  size: number;
  mime: string;
  status: DocumentStatus;
  description: string;
  pageCount: number | null;
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

export type DocumentPatch = Partial<Pick<DocumentRecord, 'status' | 'description' | 'pageCount' | 'error' | 'size' | 'mime'>>;

export type JsonObject = { [key: string]: unknown };

export interface ExtractionRecord {
  id: number;
  documentId: string;
  fields: JsonObject;
  confidence: JsonObject;
  status: ExtractionStatus;
  createdAt: number;
  updatedAt: number;
}

const DOCUMENT_COLUMNS = `id, filename, path, size, mime, status, description, page_count AS pageCount, error,
  created_at AS createdAt, updated_at AS updatedAt`;
const PATCH_COLUMNS: Record<keyof DocumentPatch, string> = {
  status: 'status',
  description: 'description',
  pageCount: 'page_count',
  error: 'error',
  size: 'size',
  mime: 'mime',
};

interface ExtractionRow {
  id: number;
  document_id: string;
  fields: string;
  confidence: string;
  status: ExtractionStatus;
  created_at: number;
  updated_at: number;
}

export class DocumentsStore {
  constructor(
    readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  async addDocument(doc: NewDocument): Promise<DocumentRecord> {
    const at = this.now();
    await this.db.run(
      `INSERT INTO documents (id, filename, path, size, mime, status, description, page_count, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [doc.id, doc.filename, doc.path, doc.size, doc.mime, doc.status ?? 'uploaded', doc.description ?? '', doc.pageCount ?? null, at, at],
    );
    return (await this.getDocument(doc.id))!;
  }

  async getDocument(id: string): Promise<DocumentRecord | undefined> {
    return this.db.get<DocumentRecord>(`SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE id = ?`, [id]);
  }

  /** Newest first. */
  async listDocuments(limit = 500): Promise<DocumentRecord[]> {
    return this.db.all<DocumentRecord>(`SELECT ${DOCUMENT_COLUMNS} FROM documents ORDER BY created_at DESC, id LIMIT ?`, [limit]);
  }

  /** Returns the updated record, or undefined when no such document exists. */
  async updateDocument(id: string, patch: DocumentPatch): Promise<DocumentRecord | undefined> {
    const keys = (Object.keys(patch) as (keyof DocumentPatch)[]).filter((key) => key in PATCH_COLUMNS && patch[key] !== undefined);
    if (keys.length) {
      const sets = keys.map((key) => `${PATCH_COLUMNS[key]} = ?`).join(', ');
      await this.db.run(`UPDATE documents SET ${sets}, updated_at = ? WHERE id = ?`, [...keys.map((key) => patch[key] ?? null), this.now(), id]);
    }
    return this.getDocument(id);
  }

  /** Removes the document and (by cascade) its extractions. */
  async deleteDocument(id: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM documents WHERE id = ?', [id])).changes > 0;
  }

  async addExtraction(input: {
    documentId: string;
    fields: JsonObject;
    confidence?: JsonObject;
    status?: ExtractionStatus;
  }): Promise<ExtractionRecord> {
    const at = this.now();
    const { lastInsertRowid } = await this.db.run(
      `INSERT INTO extractions (document_id, fields, confidence, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [input.documentId, JSON.stringify(input.fields), JSON.stringify(input.confidence ?? {}), input.status ?? 'complete', at, at],
    );
    return (await this.getExtraction(lastInsertRowid))!;
  }

  /** Replaces fields (e.g. after a user's correction), keeping the row's id and created_at. */
  async updateExtraction(
    id: number,
    patch: { fields?: JsonObject; confidence?: JsonObject; status?: ExtractionStatus },
  ): Promise<ExtractionRecord | undefined> {
    await this.db.run(
      `UPDATE extractions SET fields = coalesce(?, fields), confidence = coalesce(?, confidence),
         status = coalesce(?, status), updated_at = ? WHERE id = ?`,
      [
        patch.fields ? JSON.stringify(patch.fields) : null,
        patch.confidence ? JSON.stringify(patch.confidence) : null,
        patch.status ?? null,
        this.now(),
        id,
      ],
    );
    return this.getExtraction(id);
  }

  async getExtraction(id: number): Promise<ExtractionRecord | undefined> {
    const row = await this.db.get<ExtractionRow>('SELECT * FROM extractions WHERE id = ?', [id]);
    return row && toExtraction(row);
  }

  /** The newest extraction of a document, or undefined. */
  async latestExtraction(documentId: string): Promise<ExtractionRecord | undefined> {
    const row = await this.db.get<ExtractionRow>('SELECT * FROM extractions WHERE document_id = ? ORDER BY id DESC LIMIT 1', [documentId]);
    return row && toExtraction(row);
  }
}

function toExtraction(row: ExtractionRow): ExtractionRecord {
  return {
    id: row.id,
    documentId: row.document_id,
    fields: JSON.parse(row.fields) as JsonObject,
    confidence: JSON.parse(row.confidence) as JsonObject,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
