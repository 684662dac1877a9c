// Where the app is served from, as a worker sees it: the built app may sit at any path of any
// static host (https://example.org/tools/stackdocs/), so nothing may be fetched from "/". Workers
// are built into assets/ (and served from /worker/ and /vm/ in development), one level below the
// app's root in both cases.
export const appRoot: string = new URL('../', self.location.href).href;

/** A path of the app (e.g. "ocr/", "vm/<hash>/") as an absolute URL. */
export function appUrl(path: string): string {
  return new URL(path.replace(/^\/+/, ''), appRoot).href;
}
