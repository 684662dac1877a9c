// Renders public/favicon.svg into the PNG icons the web manifest lists. Run after changing the SVG.
import { readFile, writeFile } from 'node:fs/promises';
import { chromium } from 'playwright-core';

const svg = await readFile(new URL('../public/favicon.svg', import.meta.url), 'utf8');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage();
const targets = [
  { file: 'icon-192.png', size: 192, pad: 0 },
  { file: 'icon-512.png', size: 512, pad: 0 },
  // Maskable icons keep their content inside the central safe zone (80%).
  { file: 'icon-maskable-512.png', size: 512, pad: 0.1 },
];
for (const { file, size, pad } of targets) {
  await page.setViewportSize({ width: size, height: size });
  const inner = Math.round(size * (1 - 2 * pad));
  await page.setContent(
    `<body style="margin:0;background:#1f2a44;display:grid;place-items:center;width:${size}px;height:${size}px">` +
      `<div style="width:${inner}px;height:${inner}px">${svg.replace('<svg ', `<svg width="${inner}" height="${inner}" `)}</div></body>`,
  );
  await writeFile(new URL(`../public/icons/${file}`, import.meta.url), await page.screenshot({ omitBackground: false }));
}
await browser.close();
console.log('icons written to public/icons/');
