// The generated invoice fixtures (tests/fixtures/generate.ts), read by tests and benchmarks.
// `npm test` and `npm run bench` generate them first; vitest's and Playwright's global setups do
// too, so a single test file run on its own finds them.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../fixtures/generate.ts';
import type { Invoice } from '../fixtures/invoices.ts';

export type { Invoice } from '../fixtures/invoices.ts';
export { formatAmount, formatMoney } from '../fixtures/invoices.ts';

/** The path of a generated fixture file, e.g. `plain-1.pdf` or `german-2_scan.jpg`. */
export function fixturePath(name: string): string {
  const path = join(FIXTURES_DIR, name);
  if (!existsSync(path)) throw new Error(`The fixture ${name} is missing from ${FIXTURES_DIR}: run \`npm run fixtures\`.`);
  return path;
}

/** A generated fixture file's bytes. */
export function fixture(name: string): Buffer {
  return readFileSync(fixturePath(name));
}

/** The ground truth of every generated invoice. */
export function invoices(): Invoice[] {
  return JSON.parse(readFileSync(fixturePath('ground-truth.json'), 'utf8')) as Invoice[];
}

/** One invoice's ground truth by id (e.g. `plain-1`). */
export function invoice(id: string): Invoice {
  const found = invoices().find((entry) => entry.id === id);
  if (!found) throw new Error(`No generated invoice has the id ${id}.`);
  return found;
}
