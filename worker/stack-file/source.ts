// What an entry of a stack file is written from, for the export and the image's entries.

/** One entry of the file: a stack file read from OPFS, or a few bytes made here. */
export type Source =
  | { path: string; file: File; store?: boolean }
  | { path: string; bytes: Uint8Array; store?: boolean }
  /** Made as it is read (the system image's chunks, gathered from this browser or its server). */
  | { path: string; size: number; stream: () => AsyncIterable<Uint8Array>; store?: boolean };
