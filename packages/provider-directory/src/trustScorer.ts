import type { OfferScorer } from './routing.js';
import { offerCapabilityId, type ProviderRecord } from './store.js';
import type { TrustRecords } from './trustRecords.js';

/**
 * The {@link OfferScorer} that `prefer: "trusted"` ranks by: each offer's `trust-v2` score
 * (0..100, docs/trust-v1.md) from {@link TrustRecords}. `providers` returns the active provider
 * records (the directory's); an offer it does not know scores `null` (ranked last).
 */
export function trustScorer(trust: Pick<TrustRecords, 'score'>, providers: () => readonly ProviderRecord[]): OfferScorer {
  return {
    async scoreOf(providerId, capabilityId) {
      const record = providers().find((r) => r.provider_id === providerId);
      const offer = record?.offers.find((o) => offerCapabilityId(o) === capabilityId);
      if (!record || !offer) return null;
      const scored = await trust.score({ provider_id: providerId, listed_at: record.created_at, capability_id: capabilityId, timeout_ms: offer.timeout_ms });
      return scored.score;
    },
  };
}
