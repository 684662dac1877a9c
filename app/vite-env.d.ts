/// <reference types="vite/client" />
/// <reference types="vite-plugin-pwa/client" />

interface ImportMetaEnv {
  /** Default model endpoint (the proxy) baked into the build. */
  readonly VITE_PROXY_URL?: string;
}

declare module 'virtual:vm-image' {
  /** Where the computer's image is served (`/vm/<recipe hash>/`), or null when this build has none. */
  export const vmImageBase: string | null;
}

/** The app's version (package.json, or STACKDOCS_VERSION at build time). */
declare const __APP_VERSION__: string;
