import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from 'parse-prometheus-text-format';

/**
 * Test helper: a `/metrics` body parsed with a Prometheus text-format parser
 * (`parse-prometheus-text-format`, prom2json's shape). Throws when the text does not parse.
 */
export class Scrape {
  readonly families: PrometheusFamily[];
  constructor(readonly text: string) {
    this.families = parsePrometheusTextFormat(text);
  }

  family(name: string): PrometheusFamily | undefined {
    return this.families.find((f) => f.name === name);
  }

  /** The sample of `name` whose labels include `labels`, or undefined. */
  sample(name: string, labels: Record<string, string> = {}): PrometheusSample | undefined {
    return this.family(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  }

  /** The value of a counter or gauge sample whose labels include `labels` (0 when absent). */
  value(name: string, labels: Record<string, string> = {}): number {
    return Number(this.sample(name, labels)?.value ?? 0);
  }

  /**
   * The value of one exposition line `name{...}` whose labels include `labels`, read from the text
   * (0 when absent): for histogram series (`_count`, `_bucket`), which this parser folds into one
   * sample when they carry labels.
   */
  line(name: string, labels: Record<string, string> = {}): number {
    for (const l of this.text.split('\n')) {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m || m[1] !== name) continue;
      const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
      if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
    }
    return 0;
  }
}
