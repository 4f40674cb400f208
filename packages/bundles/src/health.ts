import type { RedisKeys } from '@acg/redis';
import type { BuilderHealth, RelayHealth, SealerHealth } from '@acg/schemas';
import type { Redis } from 'ioredis';
import { bundleKeys } from './commands/keys.js';

/**
 * Live builder counters in Redis, written by the builder (apps/builder) and read by the gateway's
 * health document, shared by replicas (docs/spec-notes.md 2.4 builder state; docs/decisions.md health shape):
 * - `bids_received`: bundles accepted into the orderflow pool (eth_sendBundle over /rpc or x402 execute);
 * - `submits`: block-construction attempts POSTed to relays, counted once per relay;
 * - `accepted`: of those, the ones a relay answered with 2xx;
 * - per relay: `submits`, `accepted`, `rejected` (refused or unanswered) with the count per reason,
 *   `latency_ms` (p50/p99 over the last 1,000 submissions), `status` (`up` after an accepted
 *   submit, `down` after a refused or failed one, `unknown` before the first), `last_submit_at`;
 * - `sealer`: whether the builder's node can seal blocks (checked at startup).
 *
 * Keys: `builder:stats` (hash), `builder:relays` (hash name → url), `builder:relay:<name>` (hash),
 * `builder:relay:<name>:rejections` (hash reason → count), `builder:relay:<name>:latency` (list, newest first).
 */
export class BuilderStats {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /**
   * Reports this builder: its BLS public key and relay list (what makes the health document show a
   * builder), and what the startup check of its sealer found.
   */
  async register(blsPublicKey: string, relays: readonly { name: string; url: string }[], sealer?: SealerHealth): Promise<void> {
    const m = this.redis.multi().hset(bundleKeys.builder(this.keys, 'stats'), 'bls_public_key', blsPublicKey, 'registered_at', new Date().toISOString());
    if (sealer) m.hset(bundleKeys.builder(this.keys, 'stats'), 'sealer', JSON.stringify(sealer));
    m.hincrby(bundleKeys.builder(this.keys, 'stats'), 'bids_received', 0)
      .hincrby(bundleKeys.builder(this.keys, 'stats'), 'submits', 0)
      .hincrby(bundleKeys.builder(this.keys, 'stats'), 'accepted', 0);
    for (const r of relays) m.hset(bundleKeys.builder(this.keys, 'relays'), r.name, r.url);
    await m.exec();
  }

  /**
   * Counts one submission to `relay`: accepted, or rejected with `detail.reason` (cut to 120
   * characters); `detail.latencyMs` is the time from sending to the relay's answer.
   */
  async recordSubmission(relay: string, accepted: boolean, at: Date, detail: { latencyMs?: number; reason?: string } = {}): Promise<void> {
    const stats = bundleKeys.builder(this.keys, 'stats');
    const rk = bundleKeys.builder(this.keys, 'relay', relay);
    const m = this.redis
      .multi()
      .hincrby(stats, 'submits', 1)
      .hincrby(stats, 'accepted', accepted ? 1 : 0)
      .hincrby(rk, 'submits', 1)
      .hincrby(rk, 'accepted', accepted ? 1 : 0)
      .hincrby(rk, 'rejected', accepted ? 0 : 1)
      .hset(rk, 'status', accepted ? 'up' : 'down', 'last_submit_at', at.toISOString());
    if (!accepted) m.hincrby(bundleKeys.builder(this.keys, 'relay', relay, 'rejections'), (detail.reason || 'unknown').slice(0, 120), 1);
    if (detail.latencyMs !== undefined && Number.isFinite(detail.latencyMs)) {
      const lk = bundleKeys.builder(this.keys, 'relay', relay, 'latency');
      m.lpush(lk, detail.latencyMs.toFixed(1)).ltrim(lk, 0, LATENCY_WINDOW - 1);
    }
    await m.exec();
  }
}

const int = (v: string | undefined) => (v ? Number.parseInt(v, 10) : 0);

/** Submissions per relay whose latency is kept for the percentiles. */
const LATENCY_WINDOW = 1000;
/** Rejection reasons shown per relay (the most frequent first). */
const MAX_REASONS = 10;

/** Nearest-rank p50/p99 of `samples` (ms); nulls when there are none. */
function latencySummary(samples: readonly string[]): { p50: number | null; p99: number | null; samples: number } {
  const ms = samples
    .map(Number)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  if (ms.length === 0) return { p50: null, p99: null, samples: 0 };
  const rank = (q: number) => ms[Math.min(ms.length - 1, Math.max(0, Math.ceil(q * ms.length) - 1))];
  return { p50: rank(0.5), p99: rank(0.99), samples: ms.length };
}

/**
 * The builder part of the health document (`BuilderHealth` of @acg/schemas), read live from Redis.
 * @returns null when no builder has registered under this key prefix (health then says `builder: null`).
 *
 * @example
 * const builder = await readBuilderHealth(redis, new RedisKeys('acg:'))
 */
export async function readBuilderHealth(redis: Redis, keys: RedisKeys): Promise<BuilderHealth | null> {
  const [stats, relayUrls] = await Promise.all([redis.hgetall(bundleKeys.builder(keys, 'stats')), redis.hgetall(bundleKeys.builder(keys, 'relays'))]);
  if (!stats.bls_public_key) return null;
  const names = Object.keys(relayUrls).sort();
  const relayStats = await Promise.all(
    names.map((n) =>
      Promise.all([
        redis.hgetall(bundleKeys.builder(keys, 'relay', n)),
        redis.hgetall(bundleKeys.builder(keys, 'relay', n, 'rejections')),
        redis.lrange(bundleKeys.builder(keys, 'relay', n, 'latency'), 0, LATENCY_WINDOW - 1),
      ]),
    ),
  );
  const relays: RelayHealth[] = names.map((name, i) => {
    const [s, reasons, latency] = relayStats[i];
    return {
      name,
      url: relayUrls[name],
      status: s.status === 'up' || s.status === 'down' ? s.status : 'unknown',
      submits: int(s.submits),
      accepted: int(s.accepted),
      rejected: int(s.rejected),
      rejections: Object.entries(reasons)
        .map(([reason, count]) => ({ reason, count: int(count) }))
        .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason))
        .slice(0, MAX_REASONS),
      latency_ms: latencySummary(latency),
      last_submit_at: s.last_submit_at ?? null,
    };
  });
  let sealer: SealerHealth | undefined;
  try {
    sealer = stats.sealer ? (JSON.parse(stats.sealer) as SealerHealth) : undefined;
  } catch {
    sealer = undefined;
  }
  return {
    bids_received: int(stats.bids_received),
    submits: int(stats.submits),
    accepted: int(stats.accepted),
    relays,
    bls_public_key: stats.bls_public_key,
    ...(sealer ? { sealer } : {}),
  };
}

/** What one searcher has sent, paid and owes (USDC base units, 6 decimals; 100000 = 0.10 USD per bundle). */
export interface SearcherCharges {
  bundles: number;
  /** Accrued over /rpc while the searcher's metered account did not hold the price; settled out-of-band (docs/spec-notes.md 4). */
  owed_base_units: string;
  /** Paid per bundle through x402 execute. */
  paid_base_units: string;
  /** Debited per bundle sent over /rpc from the searcher's metered account (the SIWE account of the signing address). */
  debited_base_units: string;
  last_bundle_at: string | null;
}

/** Reads the per-searcher pricing record (docs/spec-notes.md 8: 0.10 USD per bundle). */
export async function readSearcherCharges(redis: Redis, keys: RedisKeys, searcher: string): Promise<SearcherCharges> {
  const h = await redis.hgetall(bundleKeys.builder(keys, 'searcher', searcher.toLowerCase()));
  return {
    bundles: int(h.bundles),
    owed_base_units: h.owed_base_units ?? '0',
    paid_base_units: h.paid_base_units ?? '0',
    debited_base_units: h.debited_base_units ?? '0',
    last_bundle_at: h.last_bundle_at ?? null,
  };
}
