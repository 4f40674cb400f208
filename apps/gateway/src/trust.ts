import { canonicalSha256, signDocument, type JwsKey } from '@acg/receipts';
import { offerCapabilityId, offerSubject, TRUST_FORMULA, type OfferTrust, type ProviderRecord, type TrustRecords } from '@acg/provider-directory';
import type { AttestationPayload, OfferTrustView } from '@acg/schemas';

/**
 * Trust scores as the gateway serves them (packages/provider-directory README "Trust scores";
 * docs/trust-v1.md): the subject of each offer of a provider, the dashboard's view of an offer's
 * trust, the dispute hold of a credit, and the signed attestation.
 */

/** An offer's trust as the dashboard shows it: the score, its inputs and counts, the tier and its hold (seconds), the suspension. */
export function offerTrustView(t: OfferTrust, disputeWindowSeconds: number): OfferTrustView {
  return {
    capability_id: t.capability_id,
    formula: TRUST_FORMULA,
    score: t.score,
    inputs: t.inputs,
    counts: t.counts,
    tier: t.tier,
    hold_seconds: disputeWindowSeconds * t.hold_multiplier,
    suspended: t.suspended,
  };
}

/**
 * The attestation of a provider's scores (`GET /api/v1/providers/{provider_id}/attestation`): a JWS
 * compact, header `{alg: "EdDSA", kid, typ: "acg-attestation+jws"}`, signed with the receipt JWS
 * key, of `{provider_id, address, formula: "trust-v2", scores: [{capability_id, score, inputs, counts}], issued_at}`.
 */
export async function signAttestation(
  key: JwsKey,
  record: ProviderRecord,
  trust: Pick<TrustRecords, 'score'>,
  now: Date = new Date(),
): Promise<{ attestation: string; payload: AttestationPayload }> {
  const scores = await Promise.all(
    record.offers.map(async (offer) => {
      const subject = offerSubject(record, offerCapabilityId(offer))!;
      const s = await trust.score(subject);
      return { capability_id: subject.capability_id, score: s.score, inputs: s.inputs, counts: s.counts };
    }),
  );
  const payload: AttestationPayload = {
    provider_id: record.provider_id,
    address: record.address,
    formula: TRUST_FORMULA,
    scores,
    issued_at: now.toISOString(),
  };
  return { attestation: await signDocument(key, payload, 'acg-attestation+jws'), payload };
}

/** The canonical SHA-256 of an execute input (RFC 8785, lowercase hex): what a quote binds. */
export const inputSha256 = (input: unknown): string => canonicalSha256(input);
