// The user's files and what the agent learns: uploads (checked, stored, recorded, then read by the
// pipeline), a file read back for a window, and a memory pass on demand.
import type { DocumentRecord } from '../../memory/index.ts';
import { isOcrLanguage, OCR_LANGUAGES } from '../documents/languages.ts';
import { checkUpload, checkUploadSize, safeFileName, uniqueName } from '../documents/upload.ts';
import type { DocumentInfo } from '../../protocol/documents.ts';
import { isStorageFull, noRoomMessage, storageFullMessage } from '../storage-full.ts';
import { storageEstimate, storageUsage } from '../../storage/quota.ts';
import type { Handlers, StackContext } from './context.ts';
import { RequestError } from '../request-error.ts';

/** Uploads open a document window each while fewer than this many document windows are open. */
export const MAX_OPENED_BY_UPLOADS = 6;

/**
 * The upload's bytes: a picked file is read here. One over the limit is refused before a byte of it
 * is read, and one that changed or vanished on disk since it was picked says so.
 */
async function uploadBytes(name: string, bytes: Uint8Array | Blob): Promise<Uint8Array> {
  if (bytes instanceof Uint8Array) return bytes;
  checkUploadSize(name, bytes.size);
  try {
    return new Uint8Array(await bytes.arrayBuffer());
  } catch {
    throw new RequestError({ code: 'bad_request', message: `${safeFileName(name)} could not be read: it was moved, changed or deleted after it was picked. Add it again.` });
  }
}

/** What a document window can show: PDFs, images and Word documents (as their text). */
export function isViewable(mime: string): boolean {
  return mime === 'application/pdf' || mime.startsWith('image/') || mime.includes('wordprocessingml');
}

export function documentHandlers(ctx: StackContext): Handlers<'upload_file' | 'read_file' | 'learn_now' | 'read_document_again' | 'release_memory'> {
  const { deps, emit, newId, files, canvas, pipeline, memory } = ctx;
  return {
    async upload_file(params, id) {
      if (!(params?.bytes instanceof Uint8Array || params?.bytes instanceof Blob) || typeof params.name !== 'string') {
        throw new RequestError({ code: 'bad_request', message: 'An upload needs a file name and its bytes.' });
      }
      const bytes = await uploadBytes(params.name, params.bytes);
      const checked = await checkUpload(params.name, bytes);
      // Refused before anything is written when the browser says it will not fit.
      const refusal = noRoomMessage(`${checked.name} was not added`, bytes.byteLength, await storageEstimate());
      if (refusal) throw new RequestError({ code: 'storage', message: refusal });
      const taken = new Set((await files.list()).map((file) => file.path));
      const name = uniqueName(checked.name, (candidate) => taken.has(`documents/${candidate}`));
      let info: Awaited<ReturnType<typeof files.write>> | undefined;
      let record: DocumentRecord;
      try {
        info = await files.write(`documents/${name}`, bytes);
        record = await deps.memory.documents.addDocument({
          id: newId('doc'),
          filename: name,
          path: info.path,
          size: info.size,
          mime: checked.mime,
          description: describeUpload(name, checked.mime, info.size),
          status: 'uploaded',
        });
      } catch (error) {
        // Nothing half-added stays behind: a file without its record is removed again.
        if (info) await files.remove(info.path).catch(() => {});
        if (!isStorageFull(error)) throw error;
        throw new RequestError({ code: 'storage', message: storageFullMessage(`${name} was not added`, await storageUsage()) });
      }
      const document = toDocumentInfo(record);
      const shown = isViewable(checked.mime) && canvas.windows().filter((win) => win.kind === 'document').length < MAX_OPENED_BY_UPLOADS;
      emit({ type: 'document_added', document, ...(isViewable(checked.mime) ? { window: shown } : {}) });
      // A PDF, image or Word document the user adds shows up as a document window (a workbook's
      // sheets open as tables once read), while only a few are open: a drop of fifty invoices
      // leaves the rest in the chat, each with Open, rather than fifty windows.
      if (shown) {
        await canvas.openWindow({ kind: 'document', title: name, path: info.path, mime: checked.mime });
      }
      pipeline.process(record);
      return document;
    },

    async release_memory() {
      return { ocr_workers: deps.ocr.release?.() ?? 0 };
    },

    async read_document_again(params) {
      const record = await deps.memory.documents.getDocument(String(params?.document_id));
      if (!record) throw new RequestError({ code: 'not_found', message: `There is no document ${String(params?.document_id)}.` });
      const language = params.language;
      if (language !== 'auto' && !isOcrLanguage(language)) throw new RequestError({ code: 'bad_request', message: `Scans are read in "auto" or one of ${Object.keys(OCR_LANGUAGES).join(', ')}.` });
      if (!(record.mime.startsWith('image/') || record.mime === 'application/pdf')) throw new RequestError({ code: 'bad_request', message: `${record.filename} is not a scan: its text does not depend on a language.` });
      pipeline.process(record, { language });
      return toDocumentInfo(record);
    },

    async read_file(params) {
      const info = await files.stat(params.path);
      if (!info) throw new RequestError({ code: 'not_found', message: `There is no file at ${params.path}.` });
      return { ...info, bytes: await files.read(info.path) };
    },

    async learn_now() {
      const outcome = await memory.learnNow();
      const processed = outcome.batches.flatMap((batch) => (batch.status === 'processed' ? [batch] : []));
      const failure = outcome.batches.find((batch) => batch.status === 'failed');
      return {
        status: outcome.status,
        learnings: processed.reduce((sum, batch) => sum + batch.learnings, 0),
        files: [...new Set(processed.flatMap((batch) => batch.files))],
        remaining: outcome.remaining,
        ...(failure?.status === 'failed' ? { error: failure.message } : {}),
      };
    },
  };
}

export function toDocumentInfo(record: DocumentRecord): DocumentInfo {
  return {
    id: record.id,
    filename: record.filename,
    path: record.path,
    mime: record.mime,
    size: record.size,
    status: record.status,
    description: record.description,
    page_count: record.pageCount,
    error: record.error,
  };
}

/** A first one-line description, until the document pipeline reads the file. */
function describeUpload(name: string, mime: string, size: number): string {
  const kind = mime === 'application/pdf' ? 'PDF' : mime.startsWith('image/') ? 'image' : mime.includes('spreadsheet') ? 'spreadsheet' : mime === 'text/csv' ? 'CSV file' : 'text file';
  return `${kind} "${name}", ${size < 1024 ? `${size} bytes` : `${Math.round(size / 1024)} KB`}, uploaded by the user`;
}
