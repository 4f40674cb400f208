/** Small helpers shared by the benchmarks: percentiles, ratios, a plain-text table and the machine line. */
import os from 'node:os';

/** The machine a figure was measured on: Node version, CPU model and count, OS (printed under every table). */
export function machine(): string {
  const cpus = os.cpus();
  return `node ${process.version}, ${cpus.length} CPU (${cpus[0]?.model.trim() ?? 'unknown'}), ${os.platform()} ${os.release()} ${os.arch()}`;
}

/** Nearest-rank percentile (p in 0..100) of `values`, in the values' unit; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** `a / b`, or NaN when either side is missing or b is 0. */
export function ratio(a: number, b: number): number {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : Number.NaN;
}

/** A number with `digits` decimals and thousands separators; "n/a" for NaN. */
export function fmt(n: number, digits = 1): string {
  if (!Number.isFinite(n)) return 'n/a';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A ratio printed as "0.87x"; "n/a" for NaN. */
export function fmtRatio(n: number): string {
  return Number.isFinite(n) ? `${n.toFixed(2)}x` : 'n/a';
}

/** Renders rows as an aligned text table: first column left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((cell, i) => (i === 0 ? (cell ?? '').padEnd(widths[i]) : (cell ?? '').padStart(widths[i]))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** `o` without its undefined properties, so that spreading it over defaults keeps the defaults. */
export function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
