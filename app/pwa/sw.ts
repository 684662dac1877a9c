// The service worker: the app offline (its files precached at install, a navigation answered with
// index.html), another OCR language kept once fetched, a share from the OS kept until the app
// places it, a new version that waits for the user's "Restart" (app/pwa/pwa.ts), and the page and its
// workers served under one Content-Security-Policy that names the model endpoints the user chose.
import { clientsClaim } from 'workbox-core';
import { addPlugins, cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { CacheFirst } from 'workbox-strategies';
import { wholeBodyAsBlob } from './cache-as-blob.ts';
import { builtInEndpoints } from '../security-policy/content-security-policy.ts';
import { keepSharedFiles } from './launch-files.ts';
import { createEndpointPolicy, type AllowEndpointMessage } from '../security-policy/sw-policy.ts';

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: (string | { url: string; revision: string | null })[] };

const policy = createEndpointPolicy({ caches: self.caches, scope: self.registration.scope, builtIn: builtInEndpoints(import.meta.env.VITE_PROXY_URL || undefined, self.location.hostname) });

// Workbox caches a clone of each file it fetches: cached from a Blob, no copy stays in the tab.
// The page and every worker's script go out with the policy as a header.
addPlugins([wholeBodyAsBlob, policy.plugin]);
precacheAndRoute(self.__WB_MANIFEST);
cleanupOutdatedCaches();
// The first version a visit installs takes control at once; a later one waits for "Restart".
clientsClaim();
self.addEventListener('message', (event) => {
  const data = event.data as { type?: string } | null;
  if (data?.type === 'SKIP_WAITING') void self.skipWaiting();
  // The page names the endpoint its stack uses; the answer says whether its workers lacked it.
  if (data?.type === 'ALLOW_ENDPOINT') event.waitUntil(policy.allow(String((data as AllowEndpointMessage).endpoint)).then((answer) => event.ports[0]?.postMessage(answer)));
});

registerRoute(new NavigationRoute(createHandlerBoundToURL('index.html')));
// A share from the OS (offline too): the files wait in Cache Storage until the app places them.
registerRoute(({ url }) => url.pathname.endsWith('/share-target'), keepSharedFiles, 'POST');
// Another language's OCR data, fetched the first time a scan needs it, then kept.
registerRoute(({ url }) => /\/ocr\/[a-z]{3}\.traineddata\.gz$/.test(url.pathname), new CacheFirst({ cacheName: 'stackdocs-ocr-languages', plugins: [wholeBodyAsBlob] }));
