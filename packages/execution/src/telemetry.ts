import { LatencySeries, type RedisKeys } from '@acg/redis';
import type { ChainableCommander, Redis } from 'ioredis';

/** Latency summary of one capability, milliseconds (docs/spec-notes.md 2.4). */
export interface LatencySummary {
  p50: number | null;
  p99: number | null;
  samples: number;
  /** RFC 3339 UTC time of the newest sample, or null */
  last_at: string | null;
  /** share of the newest samples that failed, 0..1 */
  error_rate: number;
}

const WINDOW = 1000;

/**
 * Real latency measurements per capability, shared by replicas: a capped Redis list of the last
 * 1,000 samples (`<ms>:<ok>:<unix ms>`). Health and /registry read percentiles from it. Each
 * sample also goes into its minute's bucket (`LatencySeries` of @acg/redis, kept two hours), from
 * which `/status/series` and the `/status` charts read the last hour.
 */
export class Telemetry {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Records one measured run of `capabilityId`: `ms` wall time, `ok` whether it succeeded. */
  async record(capabilityId: string, ms: number, ok: boolean): Promise<void> {
    await this.sample(capabilityId, ms, ok)(this.redis.multi()).exec();
  }

  /**
   * The commands of {@link record} for one sample (the capped list, then its minute's bucket), to add
   * to a MULTI another write sends: the execution record and its sample go to Redis in one round trip
   * (`ExecutionStore.save`).
   */
  sample(capabilityId: string, ms: number, ok: boolean): (multi: ChainableCommander) => ChainableCommander {
    const key = this.keys.latency(capabilityId);
    const now = Date.now();
    return (multi) =>
      LatencySeries.append(multi.lpush(key, `${ms.toFixed(1)}:${ok ? 1 : 0}:${now}`).ltrim(key, 0, WINDOW - 1), this.keys, capabilityId, ms, ok, now);
  }

  /** Nearest-rank p50/p99 over the window. */
  async summary(capabilityId: string): Promise<LatencySummary> {
    const rows = await this.redis.lrange(this.keys.latency(capabilityId), 0, WINDOW - 1);
    if (rows.length === 0) return { p50: null, p99: null, samples: 0, last_at: null, error_rate: 0 };
    const parsed = rows.map((r) => r.split(':').map(Number) as [number, number, number]);
    const ms = parsed.map((p) => p[0]).sort((a, b) => a - b);
    const rank = (q: number) => ms[Math.min(ms.length - 1, Math.max(0, Math.ceil(q * ms.length) - 1))];
    const failures = parsed.filter((p) => p[1] === 0).length;
    return {
      p50: rank(0.5),
      p99: rank(0.99),
      samples: ms.length,
      last_at: new Date(parsed[0][2]).toISOString(),
      error_rate: failures / parsed.length,
    };
  }
}
