import type { ChainableCommander, Redis } from 'ioredis';
import type { RedisKeys } from './connection.js';

/** Width of one bucket: one minute, in milliseconds. */
export const LATENCY_BUCKET_MS = 60_000;
/** How long a bucket is kept: two hours (the status page shows the last hour), seconds. */
export const LATENCY_RETENTION_SECONDS = 2 * 3600;
/** Samples kept per bucket (the newest); percentiles of a busier minute come from these. */
export const LATENCY_BUCKET_CAP = 1000;

/** Latency of one minute of one series: percentiles in milliseconds (nearest rank), sample and failure counts. */
export interface LatencyPoint {
  /** Start of the minute, unix seconds. */
  t: number;
  p50: number | null;
  p99: number | null;
  samples: number;
  /** Samples recorded as failed (an execution that did not succeed, a failed probe). */
  errors: number;
}

/** Percentiles over a set of samples (milliseconds), nearest rank: the rule of the health document. */
export interface LatencyWindow {
  p50: number | null;
  p99: number | null;
  samples: number;
}

/** Nearest-rank p50/p99 of `ms` (the same rule as `Telemetry.summary` and the wallet monitor's delivery latency). */
export function nearestRank(ms: readonly number[]): LatencyWindow {
  if (ms.length === 0) return { p50: null, p99: null, samples: 0 };
  const sorted = [...ms].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  return { p50: rank(0.5), p99: rank(0.99), samples: sorted.length };
}

/**
 * Latency over time (docs/decisions.md "Web pages for people": `/status` charts): each sample of a series is
 * also pushed into its minute's bucket, a Redis list capped at {@link LATENCY_BUCKET_CAP} and
 * expiring after {@link LATENCY_RETENTION_SECONDS}, so the last hour can be read back per minute
 * by every replica. Writers add to their own MULTI with {@link LatencySeries.append} (the
 * execution telemetry and the prober write capability ids, the wallet monitor's delivery worker
 * `wallet_monitor.delivery`); the gateway reads with {@link LatencySeries.read}. The keys are
 * under the deployment prefix (its hash tag on a Redis Cluster keeps them in the writers' slot).
 */
export class LatencySeries {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /**
   * Adds one sample to a MULTI or pipeline: `ms` milliseconds (written with one decimal, as the
   * health samples are), `ok` whether it succeeded, at `atMs` (unix ms, default now).
   */
  static append(multi: ChainableCommander, keys: RedisKeys, series: string, ms: number, ok: boolean, atMs = Date.now()): ChainableCommander {
    const key = keys.latencyMinute(series, Math.floor(atMs / LATENCY_BUCKET_MS));
    return multi
      .lpush(key, `${ms.toFixed(1)}:${ok ? 1 : 0}`)
      .ltrim(key, 0, LATENCY_BUCKET_CAP - 1)
      .expire(key, LATENCY_RETENTION_SECONDS);
  }

  /** Records one sample now (its own MULTI). */
  async add(series: string, ms: number, ok: boolean, atMs = Date.now()): Promise<void> {
    await LatencySeries.append(this.redis.multi(), this.keys, series, ms, ok, atMs).exec();
  }

  /**
   * The last `minutes` minutes of each series (oldest first, the current minute last; a minute
   * without samples has `samples: 0` and null percentiles), and the percentiles over all of
   * them (`window`). One pipelined read.
   */
  async read(series: readonly string[], minutes = 60, nowMs = Date.now()): Promise<Record<string, { points: LatencyPoint[]; window: LatencyWindow }>> {
    const last = Math.floor(nowMs / LATENCY_BUCKET_MS);
    const buckets = Array.from({ length: minutes }, (_, i) => last - minutes + 1 + i);
    const pipeline = this.redis.pipeline();
    for (const s of series) for (const m of buckets) pipeline.lrange(this.keys.latencyMinute(s, m), 0, LATENCY_BUCKET_CAP - 1);
    const replies = (await pipeline.exec()) ?? [];
    const out: Record<string, { points: LatencyPoint[]; window: LatencyWindow }> = {};
    let i = 0;
    for (const s of series) {
      const all: number[] = [];
      const points: LatencyPoint[] = [];
      for (const m of buckets) {
        const [err, rows] = replies[i++] ?? [null, []];
        if (err) throw err;
        const parsed = (rows as string[]).map((r) => r.split(':').map(Number) as [number, number]);
        const ms = parsed.map((p) => p[0]);
        all.push(...ms);
        const { p50, p99, samples } = nearestRank(ms);
        points.push({ t: (m * LATENCY_BUCKET_MS) / 1000, p50, p99, samples, errors: parsed.filter((p) => p[1] === 0).length });
      }
      out[s] = { points, window: nearestRank(all) };
    }
    return out;
  }
}
