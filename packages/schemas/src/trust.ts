import { z } from 'zod';
import { ProviderId } from './ids.js';
import { Address, CapabilityId, DateTime } from './primitives.js';

/**
 * Wire schemas of trust scores (docs/trust-v1.md): one offer's `trust-v1` score with the inputs and
 * counts it was computed from, the dispute-hold tier, the suspension, and the signed attestation of
 * `GET /api/v1/providers/{provider_id}/attestation`.
 */

/** All-time counters of an offer, from the gateway's records (integers). */
export const TrustCounts = z.object({
  executions: z.int().nonnegative(),
  execution_failures: z.int().nonnegative(),
  probes: z.int().nonnegative(),
  probe_failures: z.int().nonnegative(),
  timeouts: z.int().nonnegative(),
  invalid_outputs: z.int().nonnegative(),
  invalid_signatures: z.int().nonnegative(),
  disputes_opened: z.int().nonnegative(),
  disputes_lost: z.int().nonnegative(),
});

/** The derived inputs of a score: rates 0..1 (recency weighted), latencies in ms, days listed, and the five components 0..1. */
export const TrustScoreInputs = z.object({
  success_rate: z.number(),
  invalid_rate: z.number(),
  latency_ms_p50: z.number().nullable(),
  latency_ms_p99: z.number().nullable(),
  timeout_ms: z.number(),
  days_listed: z.number(),
  components: z.object({ reliability: z.number(), latency: z.number(), integrity: z.number(), disputes: z.number(), tenure: z.number() }),
});

/** One offer's score as attested: `score` 0..100 (integer), with its inputs and counts. */
export const AttestedScore = z.object({
  capability_id: CapabilityId,
  score: z.int().min(0).max(100),
  inputs: TrustScoreInputs,
  counts: TrustCounts,
});

/** Why an offer is not routed now: since when, the score then, the reason, and passing probes counted toward recovery. */
export const OfferSuspensionView = z.object({ since: DateTime, score: z.int(), reason: z.string(), passing_probes: z.int().nonnegative() });

/** An offer's trust on the provider's dashboard: the attested score, the formula, the dispute-hold tier, and the suspension (null: routed). */
export const OfferTrustView = AttestedScore.extend({
  formula: z.literal('trust-v2'),
  tier: z.enum(['disputed', 'new', 'standard', 'trusted']),
  /** the hold before payout of this offer's next credits, seconds (the dispute window × the tier's multiplier) */
  hold_seconds: z.number().nonnegative(),
  suspended: OfferSuspensionView.nullable(),
});
export type OfferTrustView = z.infer<typeof OfferTrustView>;

/** The payload of a trust attestation (a JWS signed with the receipt key, `typ` `acg-attestation+jws`). */
export const AttestationPayload = z.object({
  provider_id: ProviderId,
  address: Address,
  formula: z.literal('trust-v2'),
  scores: z.array(AttestedScore),
  issued_at: DateTime,
});
export type AttestationPayload = z.infer<typeof AttestationPayload>;

/** `GET /api/v1/providers/{provider_id}/attestation`: the JWS compact serialization of an {@link AttestationPayload}. */
export const AttestationResponse = z.object({
  attestation: z.string().describe('JWS compact (EdDSA, kid of /.well-known/jwks.json) of {provider_id, address, formula, scores, issued_at}'),
});
