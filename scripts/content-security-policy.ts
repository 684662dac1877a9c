// The page's Content-Security-Policy, as a <meta> tag the production build puts in index.html, so
// it holds on any static host without special headers. The page renders model and document text
// (sanitised Markdown): if anything slipped past the sanitiser, no script it carries may run and
// nothing may be sent anywhere but the app itself and the model proxy it was built for.
import type { Plugin } from 'vite';

/**
 * The policy for a build whose default model endpoint is `proxyUrl` (if any). Styles may be
 * inline because the terminal (xterm) writes its own <style>; scripts may not, nor may eval.
 */
export function contentSecurityPolicy(proxyUrl?: string): string {
  const connect = ["'self'"];
  if (proxyUrl) connect.push(new URL(proxyUrl).origin);
  const directives: [string, string[]][] = [
    ['default-src', ["'self'"]],
    // Wasm compiles in the page too (pdfjs's image decoders); no eval, no inline script.
    ['script-src', ["'self'", "'wasm-unsafe-eval'"]],
    ['style-src', ["'self'", "'unsafe-inline'"]],
    // Documents are shown from blob: URLs of the stack's files; pdfjs and icons use data: images.
    ['img-src', ["'self'", 'blob:', 'data:']],
    ['font-src', ["'self'", 'data:']],
    ['connect-src', connect],
    ['worker-src', ["'self'"]],
    ['manifest-src', ["'self'"]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'none'"]],
    ['form-action', ["'self'"]],
  ];
  return directives.map(([name, sources]) => `${name} ${sources.join(' ')}`).join('; ');
}

/** Puts the policy into the built index.html (not the dev server's, whose hot reload needs more). */
export function contentSecurityPolicyMeta(): Plugin {
  return {
    name: 'stackdocs:content-security-policy',
    apply: 'build',
    transformIndexHtml: {
      order: 'pre',
      handler: () => [
        { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: contentSecurityPolicy(process.env.VITE_PROXY_URL || undefined) }, injectTo: 'head-prepend' },
      ],
    },
  };
}
