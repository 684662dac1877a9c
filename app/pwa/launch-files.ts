// Files that reach the app from the OS: "open with" (the manifest's file handlers, through
// `launchQueue`) and the share sheet (the manifest's share target; the service worker keeps the
// files in Cache Storage under `share/<id>/<n>` and opens the app at `?share=<id>`).

/** Where incoming files go: documents become uploads of the open stack, a `.stack` file a new stack. */
export interface FileTaker {
  upload(files: File[]): void;
  openStackFile(file: File): void;
}

/** Splits files as a drop does: the first `.stack` file opens as a stack, the rest are documents. */
export function takeFiles(files: File[], taker: FileTaker): void {
  const stackFile = files.find((file) => file.name.toLowerCase().endsWith('.stack'));
  if (stackFile) taker.openStackFile(stackFile);
  const documents = files.filter((file) => file !== stackFile);
  if (documents.length) taker.upload(documents);
}

interface LaunchParams {
  files: readonly FileSystemHandle[];
}

declare global {
  interface Window {
    launchQueue?: { setConsumer(consumer: (params: LaunchParams) => void): void };
  }
}

/** Hands files the app was opened with to `taker` (Chromium's File Handling API; elsewhere nothing happens). */
export function consumeLaunches(taker: FileTaker): void {
  window.launchQueue?.setConsumer((params) => {
    void (async () => {
      const handles = params.files.filter((handle): handle is FileSystemFileHandle => handle.kind === 'file');
      const files = await Promise.all(handles.map((handle) => handle.getFile()));
      if (files.length) takeFiles(files, taker);
    })();
  });
}

export const SHARE_CACHE = 'stackdocs-share';

/**
 * The share target's route in the service worker (app/pwa/sw.ts): each shared file goes into the
 * share cache under `share/<id>/<n>`, then the app opens at `?share=<id>` and asks which stack
 * they go to.
 */
export async function keepSharedFiles({ request }: { request: Request }): Promise<Response> {
  const form = await request.formData();
  const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const cache = await caches.open(SHARE_CACHE);
  let n = 0;
  for (const file of form.getAll('files')) {
    if (typeof file === 'string') continue;
    const headers = { 'content-type': file.type || 'application/octet-stream', 'x-file-name': encodeURIComponent(file.name) };
    await cache.put(`share/${id}/${n++}`, new Response(file, { headers }));
  }
  return Response.redirect(`./?share=${id}`, 303);
}

/** The share waiting to be placed, from the page's address (`?share=<id>`). */
export function shareId(search = location.search): string | null {
  const id = new URLSearchParams(search).get('share');
  return id && /^[\w-]{1,64}$/.test(id) ? id : null;
}

const keyPrefix = (id: string) => new URL(`share/${id}/`, document.baseURI).href;

/** The files of a share, in the order they were shared; empty when it is gone (already placed). */
export async function sharedFiles(id: string): Promise<File[]> {
  const cache = await caches.open(SHARE_CACHE);
  const prefix = keyPrefix(id);
  const keys = (await cache.keys()).filter((request) => request.url.startsWith(prefix));
  keys.sort((a, b) => Number(a.url.slice(prefix.length)) - Number(b.url.slice(prefix.length)));
  const files: File[] = [];
  for (const key of keys) {
    const response = await cache.match(key);
    if (!response) continue;
    const name = decodeURIComponent(response.headers.get('x-file-name') ?? 'shared file');
    files.push(new File([await response.blob()], name, { type: response.headers.get('content-type') ?? '' }));
  }
  return files;
}

/** Forgets a share once placed or turned down, and any older than a day (a share never placed). */
export async function forgetShare(id: string): Promise<void> {
  const cache = await caches.open(SHARE_CACHE);
  const base = new URL('share/', document.baseURI).href;
  const dayAgo = Date.now() - 86_400_000;
  for (const key of await cache.keys()) {
    const shared = key.url.startsWith(base) ? key.url.slice(base.length).split('/')[0]! : '';
    const at = parseInt(shared.split('-')[0] ?? '', 36);
    if (shared === id || (Number.isFinite(at) && at < dayAgo)) await cache.delete(key);
  }
}

/** The address without `share` (and `add`), once the share is placed: a reload does not ask again. */
export function withoutShare(href = location.href): string {
  const url = new URL(href);
  url.searchParams.delete('share');
  url.searchParams.delete('add');
  return url.pathname + (url.search === '?' ? '' : url.search) + url.hash;
}
