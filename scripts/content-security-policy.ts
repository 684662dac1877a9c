// Puts the app's Content-Security-Policy (app/security-policy/content-security-policy.ts) into the build: a <meta>
// tag in index.html, so the page holds it on any static host, and dist/_headers, so a host that
// reads that file (Cloudflare Pages) sends it as a header with every file, which is the only way a
// worker started before the service worker takes over gets a policy at all.
import type { Plugin } from 'vite';
import { builtInEndpoints, contentSecurityPolicy } from '../app/security-policy/content-security-policy.ts';

/** The policy of a build made for `proxyUrl` (if any): the endpoints a new stack may use, no more. */
export function buildPolicy(proxyUrl: string | undefined, header: boolean): string {
  // A static build cannot know the host it is served from: the local proxy is the service
  // worker's to add, which does know.
  return contentSecurityPolicy({ endpoints: builtInEndpoints(proxyUrl, null), header });
}

/** dist/_headers in Cloudflare Pages' format: the policy with every file the host serves. */
export function pagesHeaders(proxyUrl: string | undefined): string {
  return [
    '# Written by the build (scripts/content-security-policy.ts): the policy the page and its workers run under.',
    '/*',
    `  Content-Security-Policy: ${buildPolicy(proxyUrl, true)}`,
    '',
  ].join('\n');
}

/** The meta tag and dist/_headers, in production builds (the dev server's hot reload needs more). */
export function contentSecurityPolicyFiles(): Plugin {
  const proxyUrl = () => process.env.VITE_PROXY_URL || undefined;
  return {
    name: 'stackdocs:content-security-policy',
    apply: 'build',
    transformIndexHtml: {
      order: 'pre',
      handler: () => [{ tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: buildPolicy(proxyUrl(), false) }, injectTo: 'head-prepend' }],
    },
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: '_headers', source: pagesHeaders(proxyUrl()) });
    },
  };
}
