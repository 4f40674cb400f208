import type { RedisKeys } from '@acg/redis';
import type { OfferStatus } from '@acg/schemas';
import type { Redis } from 'ioredis';
import type { OfferScorer } from './routing.js';

/** Latency samples kept per offer (calls and probes, newest first): p50 and p99 are over these. */
export const OFFER_LATENCY_SAMPLES = 200;

/** One offer's record: calls and failures (paid calls), measured latencies (ms) and its probe state. */
export interface OfferMeasurements {
  calls: number;
  failures: number;
  latency_ms_p50: number | null;
  latency_ms_p99: number | null;
  /** successes / calls, null before a call */
  success_rate: number | null;
  /** `live` when its last probe passed, `down` when it failed, `pilot` before any probe */
  status: OfferStatus;
}

/** The value at quantile `q` (0..1) of `sorted` ascending, nearest rank; null when empty. */
function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * Measurements of each provider offer (docs/marketplace.md "Offers and their measurements"), in
 * Redis under the providers' `{prov}` hash tag:
 * - `{prov}:offer:<capability_id>:<provider_id>`: hash `calls`, `failures`, `probe_ok` (`1`/`0`), `probe_at`;
 * - `{prov}:offer-ms:<capability_id>:<provider_id>`: list of the last {@link OFFER_LATENCY_SAMPLES} latencies (ms).
 * A paid attempt counts as a call (a failure when it did not answer validly); a probe sets the
 * routing status and adds a latency sample without counting as a call.
 */
export class OfferStats {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  private hash(capabilityId: string, providerId: string) {
    return this.keys.providers('offer', capabilityId, providerId);
  }

  private samples(capabilityId: string, providerId: string) {
    return this.keys.providers('offer-ms', capabilityId, providerId);
  }

  /** Counts one paid attempt of an offer, a failure when `ok` is false, and its latency (ms). */
  async recordCall(capabilityId: string, providerId: string, ok: boolean, latencyMs: number): Promise<void> {
    const m = this.redis.multi().hincrby(this.hash(capabilityId, providerId), 'calls', 1);
    if (!ok) m.hincrby(this.hash(capabilityId, providerId), 'failures', 1);
    m.lpush(this.samples(capabilityId, providerId), Math.round(latencyMs).toString());
    m.ltrim(this.samples(capabilityId, providerId), 0, OFFER_LATENCY_SAMPLES - 1);
    await m.exec();
  }

  /** Records a probe of an offer: its routing status follows `ok`; a passing probe adds its latency (ms). */
  async recordProbe(capabilityId: string, providerId: string, ok: boolean, latencyMs: number, at: string): Promise<void> {
    const m = this.redis.multi().hset(this.hash(capabilityId, providerId), 'probe_ok', ok ? '1' : '0', 'probe_at', at);
    if (ok) {
      m.lpush(this.samples(capabilityId, providerId), Math.round(latencyMs).toString());
      m.ltrim(this.samples(capabilityId, providerId), 0, OFFER_LATENCY_SAMPLES - 1);
    }
    await m.exec();
  }

  /** The measurements of each `(capability_id, provider_id)` pair, in order, in one round trip. */
  async read(pairs: readonly { capabilityId: string; providerId: string }[]): Promise<OfferMeasurements[]> {
    if (pairs.length === 0) return [];
    const p = this.redis.pipeline();
    for (const { capabilityId, providerId } of pairs) {
      p.hmget(this.hash(capabilityId, providerId), 'calls', 'failures', 'probe_ok');
      p.lrange(this.samples(capabilityId, providerId), 0, -1);
    }
    const rows = (await p.exec()) ?? [];
    return pairs.map((_, i) => {
      const [calls, failures, probeOk] = (rows[2 * i]?.[1] as (string | null)[] | undefined) ?? [];
      const ms = ((rows[2 * i + 1]?.[1] as string[] | undefined) ?? []).map(Number).sort((a, b) => a - b);
      const c = Number(calls ?? 0);
      const f = Number(failures ?? 0);
      return {
        calls: c,
        failures: f,
        latency_ms_p50: quantile(ms, 0.5),
        latency_ms_p99: quantile(ms, 0.99),
        success_rate: c === 0 ? null : (c - f) / c,
        status: probeOk === '1' ? 'live' : probeOk === '0' ? 'down' : 'pilot',
      };
    });
  }
}

/**
 * The default {@link OfferScorer} (docs/marketplace.md "Trust scores"): 100 × (successes + 1) /
 * (calls + 2) over the offer's paid calls, rounded (a new offer scores 50; each failure lowers
 * it). A placeholder for the evidence-based trust score, which plugs in through the same interface.
 */
export function successRateScorer(stats: Pick<OfferStats, 'read'>): OfferScorer {
  return {
    async scoreOf(providerId, capabilityId) {
      const [m] = await stats.read([{ capabilityId, providerId }]);
      return Math.round((100 * (m.calls - m.failures + 1)) / (m.calls + 2));
    },
  };
}
