// What the service worker fetches to cache, read whole into a Blob first.
//
// Workbox caches a clone of each response it fetches (`response.clone()`) and hands on the
// original. A network body cloned that way is teed inside the renderer, and what the tee buffered
// stayed there: the precache's 36 MB of files held 55-70 MB of the app's renderer for the whole
// visit (Chromium's memory-infra: its `buffer` partition, live after a collection). A Blob is
// held by the browser process instead, and a Blob-backed body clones and caches without a copy.
import type { WorkboxPlugin } from 'workbox-core';

export const wholeBodyAsBlob: WorkboxPlugin = {
  async fetchDidSucceed({ response }) {
    // An opaque or failed response is left as it is (workbox does not cache those anyway).
    if (!response.ok || (response.type !== 'basic' && response.type !== 'cors') || response.body === null) return response;
    const { status, statusText, headers } = response;
    return new Response(await response.blob(), { status, statusText, headers });
  },
};
