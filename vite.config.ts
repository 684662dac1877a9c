// Build of the app (Preact + xyflow under preact/compat) and its service worker.
import { OCR_LANGUAGES } from './worker/documents/languages.ts';
import preact from '@preact/preset-vite';
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { contentSecurityPolicyFiles } from './scripts/content-security-policy.ts';
import { findVmImage, vmImageModule } from './scripts/vm-image-plugin.ts';
import { ensureFixtures } from './tests/fixtures/generate.ts';
import { SAMPLE_SOURCES } from './tests/fixtures/samples.ts';
import { buildTemplates } from './scripts/stack-templates.ts';

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

const OCR_LANGUAGE_CODES = Object.keys(OCR_LANGUAGES);

/**
 * tesseract.js's worker, wasm cores and the data of every language scans can be read in, served
 * under /ocr/ (English precached so OCR works offline from the first visit; the others are kept
 * by the service worker once first used).
 */
function ocrAssets(): Plugin {
  const modules = join(import.meta.dirname, 'node_modules');
  const files: [string, string][] = [
    [join(modules, 'tesseract.js/dist/worker.min.js'), 'worker.min.js'],
    ...OCR_LANGUAGE_CODES.map((code): [string, string] => [join(modules, `@tesseract.js-data/${code}/4.0.0_best_int/${code}.traineddata.gz`), `${code}.traineddata.gz`]),
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

/**
 * The first run's sample documents (app/chat/FirstRun.tsx): three of the project's own generated
 * invoices (tests/fixtures, made from a seed; nothing downloaded), served under samples/.
 */
function sampleDocuments(): Plugin {
  return {
    name: 'stackdocs:sample-documents',
    apply: 'build',
    async generateBundle() {
      const dir = await ensureFixtures();
      for (const [name, { fixture }] of Object.entries(SAMPLE_SOURCES)) this.emitFile({ type: 'asset', fileName: `samples/${name}`, source: readFileSync(join(dir, fixture)) });
    },
  };
}

/** The shipped stack templates (templates/), packed as `.stack` files under templates/ with their index. */
function stackTemplates(version: string): Plugin {
  return {
    name: 'stackdocs:stack-templates',
    apply: 'build',
    generateBundle() {
      const built = buildTemplates(version);
      for (const { info, bytes } of built) this.emitFile({ type: 'asset', fileName: info.file, source: bytes });
      this.emitFile({ type: 'asset', fileName: 'templates/index.json', source: JSON.stringify(built.map(({ info }) => info), null, 1) });
    },
  };
}

/**
 * The computer's image (vm-images/out/latest, built by vm-images/build.sh): copied into
 * dist/vm/<hash>/ by the build, served from there in dev, and named to the app by the virtual
 * module `virtual:vm-image` (null when no image is built: the app then says so).
 */
function vmImage(): Plugin {
  const { dir = null, hash = null, base = null } = findVmImage() ?? {};
  let outDir = 'dist';
  return {
    name: 'stackdocs:vm-image',
    configResolved(config) {
      outDir = config.build.outDir;
    },
    configureServer(server) {
      if (!dir || !base) return;
      server.middlewares.use(base, (req, res, next) => {
        const file = join(dir, decodeURIComponent((req.url ?? '/').split('?')[0]!));
        if (!file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) return next();
        res.setHeader('content-type', 'application/octet-stream');
        res.end(readFileSync(file));
      });
    },
    // Before the service worker's precache list is made (closeBundle), which must see the boot files.
    writeBundle: {
      sequential: true,
      order: 'pre',
      handler() {
        if (!dir || !hash) return;
        // ~180 MB of chunks: copied as files, not through the bundle.
        cpSync(dir, join(outDir, 'vm', hash), { recursive: true, dereference: true });
      },
    },
  };
}

/** The documents the app reads, as the manifest names them for "open with" and sharing. */
const SHARED_DOCUMENTS: Record<string, string[]> = {
  'application/pdf': ['.pdf'],
  'image/png': ['.png'],
  'image/jpeg': ['.jpg', '.jpeg'],
  'image/webp': ['.webp'],
  'text/csv': ['.csv'],
  'text/plain': ['.txt'],
  'text/markdown': ['.md', '.markdown'],
  'image/tiff': ['.tif', '.tiff'],
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': ['.xlsx'],
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': ['.docx'],
};

// What Settings shows as the version; a build for a release (or a test of updates) may name its own.
const APP_VERSION = process.env.STACKDOCS_VERSION || (JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string }).version;

export default defineConfig({
  // Relative: the built app works from any path of any static host (a project page, an intranet
  // folder), not only from a host's root.
  base: './',
  plugins: [
    preact(),
    contentSecurityPolicyFiles(),
    pdfjsAssets(),
    ocrAssets(),
    sampleDocuments(),
    stackTemplates(APP_VERSION),
    vmImage(),
    vmImageModule(),
    VitePWA({
      // A new version waits for the user's "Restart" (app/pwa/pwa.ts), which first saves the computer.
      registerType: 'prompt',
      injectRegister: false,
      includeAssets: ['favicon.svg', 'icons/*.png'],
      manifest: {
        // Relative to the manifest, so the app installs wherever it is served.
        id: './',
        name: 'Stackdocs',
        short_name: 'Stackdocs',
        description: 'A personal AI computer that lives in one browser tab.',
        start_url: './',
        scope: './',
        display: 'standalone',
        background_color: '#f4f5f8',
        theme_color: '#1f2a44',
        icons: [
          { src: 'icons/icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: 'icons/icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: 'icons/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
        // "Open with" from the OS's files (ChromeOS Files, a desktop): documents join the open
        // stack as uploads, a `.stack` file opens as a new stack (app/pwa/launch-files.ts).
        file_handlers: [{ action: './', accept: { ...SHARED_DOCUMENTS, 'application/x-stackdocs-stack': ['.stack'] } }],
        launch_handler: { client_mode: 'focus-existing' },
        // The share sheet: the service worker keeps what was shared and opens the app to place it.
        share_target: {
          action: './share-target',
          method: 'POST',
          enctype: 'multipart/form-data',
          params: { files: [{ name: 'files', accept: [...Object.keys(SHARED_DOCUMENTS), ...Object.values(SHARED_DOCUMENTS).flat(), '.stack'] }] },
        },
      },
      // The service worker is app/pwa/sw.ts; these are the files it precaches.
      strategies: 'injectManifest',
      srcDir: 'app/pwa',
      filename: 'sw.ts',
      injectManifest: {
        globPatterns: ['**/*.{js,mjs,css,html,svg,png,ico,wasm,json,webmanifest,gz,txt,bcmap,pfb,ttf}', 'samples/*', 'templates/*', 'vm/*/{bzImage,bios.bin,vgabios.bin,initrd.img}'],
        // The disk chunks and the saved states are copied into OPFS once (the boot state by the
        // background download, beside the chunks); the kernel and BIOS files (precached above)
        // are a cold boot's fallback offline. Other OCR languages are kept when first fetched.
        globIgnores: ['vm/*/disk/**', 'vm/*/*state.{gzip,zstd}', ...OCR_LANGUAGE_CODES.filter((code) => code !== 'eng').map((code) => `ocr/${code}.traineddata.gz`)],
        // The OCR core and the VM image chunks are several MB each.
        maximumFileSizeToCacheInBytes: 16 * 1024 * 1024,
      },
    }),
  ],
  define: { __APP_VERSION__: JSON.stringify(APP_VERSION) },
  // ASCII only: one character outside it makes the browser decode the whole script into a
  // two-byte string, slower to decode and to parse (the stack worker's start waits on both).
  worker: { format: 'es', plugins: () => [vmImageModule()], rolldownOptions: { output: { charset: 'ascii' } } },
  build: { target: 'es2022', sourcemap: true, rolldownOptions: { output: { charset: 'ascii' } } },
  preview: { port: 4173, strictPort: true, host: '127.0.0.1' },
});
