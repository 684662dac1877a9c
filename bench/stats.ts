// Summaries and the one-JSON-object-per-line output every benchmark prints.

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const round = (value: number, digits = 2) => Number(value.toFixed(digits));

export interface BenchLine {
  bench: string;
  value: number;
  unit: string;
  n?: number;
  p50?: number;
  p95?: number;
  [extra: string]: unknown;
}

export function report(line: BenchLine): void {
  console.log(JSON.stringify(line));
}

/** p50 as the headline value, with p95 and n. */
export function summarise(bench: string, unit: string, samples: number[], extra: Record<string, unknown> = {}): BenchLine {
  const p50 = round(percentile(samples, 50));
  return { bench, value: p50, unit, n: samples.length, p50, p95: round(percentile(samples, 95)), ...extra };
}
