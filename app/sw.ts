// The service worker: the app offline (its files precached at install, a navigation answered with
// index.html), another OCR language kept once fetched, a share from the OS kept until the app
// places it, and a new version that waits for the user's "Restart" (app/pwa.ts).
import { clientsClaim } from 'workbox-core';
import { addPlugins, cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { CacheFirst } from 'workbox-strategies';
import { wholeBodyAsBlob } from './cache-as-blob.ts';
import { keepSharedFiles } from './launch-files.ts';

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: (string | { url: string; revision: string | null })[] };

// Workbox caches a clone of each file it fetches: cached from a Blob, no copy stays in the tab.
addPlugins([wholeBodyAsBlob]);
precacheAndRoute(self.__WB_MANIFEST);
cleanupOutdatedCaches();
// The first version a visit installs takes control at once; a later one waits for "Restart".
clientsClaim();
self.addEventListener('message', (event) => {
  if ((event.data as { type?: string } | null)?.type === 'SKIP_WAITING') void self.skipWaiting();
});

registerRoute(new NavigationRoute(createHandlerBoundToURL('index.html')));
// A share from the OS (offline too): the files wait in Cache Storage until the app places them.
registerRoute(({ url }) => url.pathname.endsWith('/share-target'), keepSharedFiles, 'POST');
// Another language's OCR data, fetched the first time a scan needs it, then kept.
registerRoute(({ url }) => /\/ocr\/[a-z]{3}\.traineddata\.gz$/.test(url.pathname), new CacheFirst({ cacheName: 'stackdocs-ocr-languages', plugins: [wholeBodyAsBlob] }));
