// The project's sample documents, shipped in the build under samples/: fetched and added to the
// stack through the same upload path as a file the user drops.
import { SAMPLE_DOCUMENTS } from '../../protocol/documents.ts';
import type { Uploader } from '../connection/useUploads.ts';

/** Adds the samples the stack does not have yet (`present`: the paths of its documents). Throws when one cannot be fetched. */
export async function addSampleDocuments(uploader: Uploader, present: (path: string) => boolean = () => false): Promise<void> {
  const missing = SAMPLE_DOCUMENTS.filter((name) => !present(`documents/${name}`));
  const files = await Promise.all(
    missing.map(async (name) => {
      const response = await fetch(new URL(`samples/${name}`, document.baseURI));
      if (!response.ok) throw new Error(`${name}: ${response.status}`);
      return new File([await response.blob()], name, { type: response.headers.get('content-type') ?? '' });
    }),
  );
  if (files.length) await uploader.upload(files);
}
