/// <reference types="vite/client" />
/// <reference types="vite-plugin-pwa/client" />

interface ImportMetaEnv {
  /** Default model endpoint (the proxy) baked into the build. */
  readonly VITE_PROXY_URL?: string;
}
