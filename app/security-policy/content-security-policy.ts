// The one Content-Security-Policy of the page and of every worker it starts. The build puts it in
// index.html as a <meta> tag and in dist/_headers; the service worker serves it as a header with
// the page and each worker's script, adding the model endpoints the user chose in this browser.
// Pure: imported by the build (Node) and by the service worker.

/** Anthropic's API: the model endpoint of a stack that talks to it with the user's own key. */
export const OWN_KEY_ENDPOINT = 'https://api.anthropic.com';

/** The proxy `npm start` runs, the default of a build without one when served from this machine. */
export const LOCAL_PROXY = 'http://127.0.0.1:8787';

const THIS_MACHINE = /^(localhost|127\.0\.0\.1|\[::1\])$/;

/**
 * The endpoints a new stack may use before anyone chose one: the proxy the build was made for (else
 * the local one, for a page served from this machine, as worker/open-stack.ts decides) and
 * Anthropic's API.
 */
export function builtInEndpoints(proxyUrl: string | undefined, hostname: string | null): string[] {
  const proxy = proxyUrl || (hostname !== null && THIS_MACHINE.test(hostname) ? LOCAL_PROXY : '');
  return [...(proxy ? [proxy] : []), OWN_KEY_ENDPOINT];
}

/**
 * The connect-src sources that reach `endpoint`: its origin, and the same host over WebSocket
 * (the computer's relay is `ws(s)://` on the proxy; CSP does not count `http:` as `ws:`).
 * Empty for anything but an http(s) URL.
 */
export function connectSources(endpoint: string): string[] {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return [];
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return [];
  return [url.origin, `${url.protocol === 'https:' ? 'wss:' : 'ws:'}//${url.host}`];
}

export interface PolicyOptions {
  /** Model endpoints the workers may reach besides the app itself. */
  endpoints?: readonly string[];
  /** For a response header: adds what a <meta> tag cannot carry (frame-ancestors). */
  header?: boolean;
}

/**
 * The policy. No inline script and no eval anywhere, only wasm (v86, SQLite, OCR, pdfjs's image
 * decoders). Styles may be inline, as elements and as attributes, because the terminal (xterm's
 * DOM renderer) writes its own <style> and colours each cell with `setAttribute('style')`
 * (Preact's and xyflow's style props go through the CSSOM, which CSP does not govern); rendered
 * Markdown carries neither (app/common/Markdown.tsx). Workers may start from blob: because v86 starts
 * its helpers so; a blob: worker inherits its creator's policy, so it reaches no more.
 */
export function contentSecurityPolicy({ endpoints = [], header = false }: PolicyOptions = {}): string {
  const connect = ["'self'"];
  for (const source of endpoints.flatMap(connectSources)) if (!connect.includes(source)) connect.push(source);
  const directives: [string, string[]][] = [
    ['default-src', ["'self'"]],
    ['script-src', ["'self'", "'wasm-unsafe-eval'"]],
    ['style-src', ["'self'", "'unsafe-inline'"]],
    // Documents are shown from blob: URLs of the stack's files; pdfjs and icons use data: images.
    ['img-src', ["'self'", 'blob:', 'data:']],
    ['font-src', ["'self'", 'data:']],
    ['connect-src', connect],
    ['worker-src', ["'self'", 'blob:']],
    ['manifest-src', ["'self'"]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'none'"]],
    ['form-action', ["'self'"]],
    // No other site may frame the app and lay its own buttons over "Allow".
    ...(header ? [['frame-ancestors', ["'none'"]] as [string, string[]]] : []),
  ];
  return directives.map(([name, sources]) => `${name} ${sources.join(' ')}`).join('; ');
}
