import type { RedisKeys } from '@acg/redis';
import type { BuilderHealth, RelayHealth } from '@acg/schemas';
import type { Redis } from 'ioredis';

/**
 * Live builder counters in Redis, written by the builder (apps/builder) and read by the gateway's
 * health document, shared by replicas (SPEC 2.4 builder state; DESIGN health shape):
 * - `bids_received`: bundles accepted into the orderflow pool (eth_sendBundle over /rpc or x402 execute);
 * - `submits`: block-construction attempts POSTed to relays, counted once per relay;
 * - `accepted`: of those, the ones a relay answered with 2xx;
 * - per relay: `submits`, `accepted`, `status` (`up` after an accepted submit, `down` after a
 *   refused or failed one, `unknown` before the first), `last_submit_at`.
 *
 * Keys: `builder:stats` (hash), `builder:relays` (hash name → url), `builder:relay:<name>` (hash).
 */
export class BuilderStats {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Reports this builder: its BLS public key and relay list (what makes the health document show a builder). */
  async register(blsPublicKey: string, relays: readonly { name: string; url: string }[]): Promise<void> {
    const m = this.redis.multi().hset(this.keys.builder('stats'), 'bls_public_key', blsPublicKey, 'registered_at', new Date().toISOString());
    m.hincrby(this.keys.builder('stats'), 'bids_received', 0)
      .hincrby(this.keys.builder('stats'), 'submits', 0)
      .hincrby(this.keys.builder('stats'), 'accepted', 0);
    for (const r of relays) m.hset(this.keys.builder('relays'), r.name, r.url);
    await m.exec();
  }

  /** Counts one submission to `relay` and whether it was accepted. */
  async recordSubmission(relay: string, accepted: boolean, at: Date): Promise<void> {
    const stats = this.keys.builder('stats');
    const rk = this.keys.builder('relay', relay);
    await this.redis
      .multi()
      .hincrby(stats, 'submits', 1)
      .hincrby(stats, 'accepted', accepted ? 1 : 0)
      .hincrby(rk, 'submits', 1)
      .hincrby(rk, 'accepted', accepted ? 1 : 0)
      .hset(rk, 'status', accepted ? 'up' : 'down', 'last_submit_at', at.toISOString())
      .exec();
  }
}

const int = (v: string | undefined) => (v ? Number.parseInt(v, 10) : 0);

/**
 * The builder part of the health document (`BuilderHealth` of @acg/schemas), read live from Redis.
 * @returns null when no builder has registered under this key prefix (health then says `builder: null`).
 *
 * @example
 * const builder = await readBuilderHealth(redis, new RedisKeys('acg:'))
 */
export async function readBuilderHealth(redis: Redis, keys: RedisKeys): Promise<BuilderHealth | null> {
  const [stats, relayUrls] = await Promise.all([redis.hgetall(keys.builder('stats')), redis.hgetall(keys.builder('relays'))]);
  if (!stats.bls_public_key) return null;
  const names = Object.keys(relayUrls).sort();
  const relayStats = await Promise.all(names.map((n) => redis.hgetall(keys.builder('relay', n))));
  const relays: RelayHealth[] = names.map((name, i) => {
    const s = relayStats[i];
    return {
      name,
      url: relayUrls[name],
      status: s.status === 'up' || s.status === 'down' ? s.status : 'unknown',
      submits: int(s.submits),
      accepted: int(s.accepted),
      last_submit_at: s.last_submit_at ?? null,
    };
  });
  return {
    bids_received: int(stats.bids_received),
    submits: int(stats.submits),
    accepted: int(stats.accepted),
    relays,
    bls_public_key: stats.bls_public_key,
  };
}

/** What one searcher has sent, paid and owes (USDC base units, 6 decimals; 100000 = 0.10 USD per bundle). */
export interface SearcherCharges {
  bundles: number;
  /** Accrued over /rpc while the searcher's metered account did not hold the price; settled out-of-band (SPEC 4). */
  owed_base_units: string;
  /** Paid per bundle through x402 execute. */
  paid_base_units: string;
  /** Debited per bundle sent over /rpc from the searcher's metered account (the SIWE account of the signing address). */
  debited_base_units: string;
  last_bundle_at: string | null;
}

/** Reads the per-searcher pricing record (SPEC 8: 0.10 USD per bundle). */
export async function readSearcherCharges(redis: Redis, keys: RedisKeys, searcher: string): Promise<SearcherCharges> {
  const h = await redis.hgetall(keys.builder('searcher', searcher.toLowerCase()));
  return {
    bundles: int(h.bundles),
    owed_base_units: h.owed_base_units ?? '0',
    paid_base_units: h.paid_base_units ?? '0',
    debited_base_units: h.debited_base_units ?? '0',
    last_bundle_at: h.last_bundle_at ?? null,
  };
}
