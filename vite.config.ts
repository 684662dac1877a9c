// Build of the app (Preact + xyflow under preact/compat) and its service worker.
import preact from '@preact/preset-vite';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';

/** pdfjs's fonts, character maps and wasm, served under /pdfjs/ and precached for offline use. */
function pdfjsAssets(): Plugin {
  const base = join(import.meta.dirname, 'node_modules/pdfjs-dist');
  return {
    name: 'stackdocs:pdfjs-assets',
    apply: 'build',
    generateBundle() {
      for (const dir of ['standard_fonts', 'cmaps', 'wasm']) {
        for (const file of readdirSync(join(base, dir))) {
          this.emitFile({ type: 'asset', fileName: `pdfjs/${dir}/${file}`, source: readFileSync(join(base, dir, file)) });
        }
      }
    },
  };
}

/** tesseract.js's worker, wasm cores and English data, served under /ocr/ so OCR works offline. */
function ocrAssets(): Plugin {
  const modules = join(import.meta.dirname, 'node_modules');
  const files: [string, string][] = [
    [join(modules, 'tesseract.js/dist/worker.min.js'), 'worker.min.js'],
    [join(modules, '@tesseract.js-data/eng/4.0.0_best_int/eng.traineddata.gz'), 'eng.traineddata.gz'],
    ...readdirSync(join(modules, 'tesseract.js-core'))
      .filter((file) => /^tesseract-core.*lstm\.wasm\.js$/.test(file))
      .map((file): [string, string] => [join(modules, 'tesseract.js-core', file), file]),
  ];
  return {
    name: 'stackdocs:ocr-assets',
    apply: 'build',
    generateBundle() {
      for (const [from, name] of files) this.emitFile({ type: 'asset', fileName: `ocr/${name}`, source: readFileSync(from) });
    },
  };
}

export default defineConfig({
  plugins: [
    preact(),
    pdfjsAssets(),
    ocrAssets(),
    VitePWA({
      registerType: 'autoUpdate',
      injectRegister: false,
      includeAssets: ['favicon.svg', 'icons/*.png'],
      manifest: {
        id: '/',
        name: 'Stackdocs',
        short_name: 'Stackdocs',
        description: 'A personal AI computer that lives in one browser tab.',
        start_url: '/',
        scope: '/',
        display: 'standalone',
        background_color: '#f4f5f8',
        theme_color: '#1f2a44',
        icons: [
          { src: '/icons/icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: '/icons/icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: '/icons/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
      },
      workbox: {
        globPatterns: ['**/*.{js,mjs,css,html,svg,png,ico,wasm,json,webmanifest,gz,txt,bcmap,pfb,ttf}'],
        // The OCR core and the VM image chunks are several MB each.
        maximumFileSizeToCacheInBytes: 16 * 1024 * 1024,
        navigateFallback: 'index.html',
        clientsClaim: true,
        skipWaiting: true,
        cleanupOutdatedCaches: true,
      },
    }),
  ],
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  preview: { port: 4173, strictPort: true, host: '127.0.0.1' },
});
