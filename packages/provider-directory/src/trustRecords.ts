import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { offerCapabilityId, type ProviderRecord, type ProviderStore } from './store.js';
import {
  TRUST_FORMULA,
  TRUST_RECOVERY_PROBES,
  TRUST_ROUTING_THRESHOLD,
  TRUST_WINDOW_OUTCOMES,
  trustScore,
  trustTier,
  zeroCounts,
  type TrustCounts,
  type TrustOutcome,
  type TrustScore,
  type TrustTier,
} from './trust.js';

/** A dispute as the trust records read it (the provider ledger's `DisputeView` fits). */
export interface TrustDispute {
  capability_id: string;
  status: 'open' | 'refunded' | 'released';
  opened_at: string;
  resolved_at: string | null;
}

/** Why an offer is not routed (docs/trust-v1.md "Suspension"): since when (RFC 3339), the score and outcome that suspended it, probes passed since. */
export interface OfferSuspension {
  since: string;
  score: number;
  reason: string;
  passing_probes: number;
}

/** The offer a record is about: the provider, its listing time and the offer's capability id and declared timeout. */
export interface TrustSubject {
  provider_id: string;
  /** RFC 3339: when the provider was listed */
  listed_at: string;
  capability_id: string;
  timeout_ms: number;
}

/** An offer's score, tier and suspension, as the dashboard and the attestation show them. */
export interface OfferTrust extends TrustScore {
  capability_id: string;
  tier: TrustTier;
  /** multiplier of the dispute window for this offer's next credits */
  hold_multiplier: number;
  suspended: OfferSuspension | null;
}

const COUNTER_OF: Record<TrustOutcome['outcome'], keyof TrustCounts | undefined> = {
  succeeded: undefined,
  failed: undefined,
  timeout: 'timeouts',
  invalid_output: 'invalid_outputs',
  invalid_signature: 'invalid_signatures',
};

const NINETY_DAYS_MS = 90 * 86_400_000;

/**
 * The gateway's own records behind trust scores (docs/trust-v1.md), in Redis under the `{prov}`
 * hash tag, per offer (provider id, capability id):
 * - `{prov}:trust:n:<prv>:<cap>`: hash of all-time counters ({@link TrustCounts} without disputes);
 * - `{prov}:trust:r:<prv>:<cap>`: list of the last 200 outcomes, newest first (JSON {@link TrustOutcome});
 * - `{prov}:trust:s:<prv>:<cap>`: the suspension, while there is one ({@link OfferSuspension}).
 *
 * {@link record} is called for every provider execution (`providerCapability`'s run) and every
 * probe (the gateway's prober). A failed execution that leaves the score under
 * {@link TRUST_ROUTING_THRESHOLD} suspends the offer; {@link TRUST_RECOVERY_PROBES} consecutive
 * passing probes lift it. Disputes are read from the provider ledger through `disputes`.
 */
export class TrustRecords {
  constructor(
    private readonly o: {
      redis: Redis;
      keys: RedisKeys;
      /** The provider's disputes (the provider ledger's `disputesOfProvider`); none without it. */
      disputes?: (providerId: string) => Promise<readonly TrustDispute[]>;
      /** unix ms (tests move it) */
      now?: () => number;
    },
  ) {}

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  private key(kind: 'n' | 'r' | 's', providerId: string, capabilityId: string): string {
    return this.o.keys.providers('trust', kind, providerId, capabilityId);
  }

  /**
   * Records one execution or probe of an offer, then updates its suspension: a probe while
   * suspended counts toward recovery (a failed one resets the count); a failed execution suspends
   * the offer when its score falls under the routing threshold. Returns the suspension after it.
   */
  async record(subject: TrustSubject, outcome: Omit<TrustOutcome, 'at'> & { at?: number }): Promise<OfferSuspension | null> {
    const { provider_id: p, capability_id: c } = subject;
    const entry: TrustOutcome = { ...outcome, at: outcome.at ?? this.now() };
    const ok = entry.outcome === 'succeeded';
    const n = this.key('n', p, c);
    const m = this.o.redis.multi();
    m.hincrby(n, entry.source === 'execution' ? 'executions' : 'probes', 1);
    if (!ok) m.hincrby(n, entry.source === 'execution' ? 'execution_failures' : 'probe_failures', 1);
    const counter = COUNTER_OF[entry.outcome];
    if (counter) m.hincrby(n, counter, 1);
    m.lpush(this.key('r', p, c), JSON.stringify(entry));
    m.ltrim(this.key('r', p, c), 0, TRUST_WINDOW_OUTCOMES - 1);
    await m.exec();

    const s = this.key('s', p, c);
    const suspended = await this.suspension(p, c);
    if (suspended && entry.source === 'probe') {
      if (!ok) {
        await this.o.redis.hset(s, 'passing_probes', 0);
        return { ...suspended, passing_probes: 0 };
      }
      const passed = await this.o.redis.hincrby(s, 'passing_probes', 1);
      // a probe weighs less than a paid call (TRUST_PROBE_WEIGHT): passing probes lift the suspension
      // only once they have outweighed the paid failures, so failing buyers while passing probes keeps it
      if (passed >= TRUST_RECOVERY_PROBES && (await this.score(subject)).score >= TRUST_ROUTING_THRESHOLD) {
        await this.o.redis.del(s);
        return null;
      }
      return { ...suspended, passing_probes: passed };
    }
    // only answers to buyers suspend: a failing probe keeps the offer STALE in the catalog, and counts in its score
    if (suspended || ok || entry.source === 'probe') return suspended;
    const score = await this.score(subject);
    if (score.score >= TRUST_ROUTING_THRESHOLD) return null;
    const suspension: OfferSuspension = {
      since: new Date(entry.at).toISOString(),
      score: score.score,
      reason: `${TRUST_FORMULA} score ${score.score} is under the routing threshold ${TRUST_ROUTING_THRESHOLD} after an execution ended ${entry.outcome}; routing resumes after ${TRUST_RECOVERY_PROBES} consecutive passing probes once the score is back at the threshold`,
      passing_probes: 0,
    };
    await this.o.redis.hset(s, { ...suspension, passing_probes: '0', score: String(suspension.score) });
    return suspension;
  }

  /** The offer's suspension, or null when it is routed. */
  async suspension(providerId: string, capabilityId: string): Promise<OfferSuspension | null> {
    const h = await this.o.redis.hgetall(this.key('s', providerId, capabilityId));
    if (!h.since) return null;
    return { since: h.since, score: Number(h.score), reason: h.reason, passing_probes: Number(h.passing_probes ?? 0) };
  }

  /** The offer's all-time counters, disputes included. */
  async counts(providerId: string, capabilityId: string): Promise<TrustCounts> {
    const [h, disputes] = await Promise.all([this.o.redis.hgetall(this.key('n', providerId, capabilityId)), this.disputesOf(providerId, capabilityId)]);
    const counts = zeroCounts();
    for (const k of Object.keys(counts) as (keyof TrustCounts)[]) counts[k] = Number(h[k] ?? 0);
    counts.disputes_opened = disputes.length;
    counts.disputes_lost = disputes.filter((d) => d.status === 'refunded').length;
    return counts;
  }

  /** The offer's `trust-v2` score from its records now ({@link trustScore}). */
  async score(subject: TrustSubject): Promise<TrustScore> {
    return (await this.evaluate(subject)).score;
  }

  /** Score, dispute-hold tier and suspension of an offer. */
  async offerTrust(subject: TrustSubject): Promise<OfferTrust> {
    const { score, lostRecently } = await this.evaluate(subject);
    const { tier, multiplier } = trustTier({ score, lost_recently: lostRecently });
    return {
      capability_id: subject.capability_id,
      ...score,
      tier,
      hold_multiplier: multiplier,
      suspended: await this.suspension(subject.provider_id, subject.capability_id),
    };
  }

  private async evaluate(subject: TrustSubject): Promise<{ score: TrustScore; lostRecently: boolean }> {
    const { provider_id: p, capability_id: c } = subject;
    const now = this.now();
    const [raw, counts, disputes] = await Promise.all([
      this.o.redis.lrange(this.key('r', p, c), 0, TRUST_WINDOW_OUTCOMES - 1),
      this.counts(p, c),
      this.disputesOf(p, c),
    ]);
    const recent = raw.map((line) => JSON.parse(line) as TrustOutcome);
    const score = trustScore({ recent, counts, timeout_ms: subject.timeout_ms, listed_at: subject.listed_at, now });
    const lostRecently = disputes.some((d) => d.status === 'refunded' && now - Date.parse(d.resolved_at ?? d.opened_at) < NINETY_DAYS_MS);
    return { score, lostRecently };
  }

  private async disputesOf(providerId: string, capabilityId: string): Promise<readonly TrustDispute[]> {
    if (!this.o.disputes) return [];
    return (await this.o.disputes(providerId)).filter((d) => d.capability_id === capabilityId);
  }
}

/** The trust subject of the offer of `record` on `capabilityId`, or undefined when the provider does not offer it. */
export function offerSubject(record: ProviderRecord, capabilityId: string): TrustSubject | undefined {
  const offer = record.offers.find((o) => offerCapabilityId(o) === capabilityId);
  if (!offer) return undefined;
  return { provider_id: record.provider_id, listed_at: record.created_at, capability_id: capabilityId, timeout_ms: offer.timeout_ms };
}

/**
 * The hold of a credit, seconds: `disputeWindowSeconds` × the tier multiplier of the offer that
 * answered (docs/trust-v1.md "Dispute hold tiers"; the gateway's and the worker's `ProviderLedger.holdSeconds`); the plain window for an unknown provider or offer.
 */
export async function creditHoldSeconds(
  deps: { store: Pick<ProviderStore, 'get'>; trust: Pick<TrustRecords, 'offerTrust'>; disputeWindowSeconds: number },
  credit: { provider_id: string; capability_id: string },
): Promise<number> {
  const record = await deps.store.get(credit.provider_id);
  const subject = record && offerSubject(record, credit.capability_id);
  if (!subject) return deps.disputeWindowSeconds;
  const t = await deps.trust.offerTrust(subject);
  return deps.disputeWindowSeconds * t.hold_multiplier;
}
