import { createHash } from 'node:crypto';
import { probeStatus, type ProbeRecord, type ProviderOffer } from '@acg/schemas';
import { verifyResultSignature } from '@acg/provider-kit';
import { ulid } from 'ulid';
import type { ProviderClient } from './client.js';
import { compileJsonSchema } from './jsonSchema.js';
import { offerCapabilityId, type ProviderRecord } from './store.js';
import type { TrustOutcomeKind } from './trust.js';

/**
 * Probes one provider offer (packages/provider-directory README, probing): a signed, free call with the
 * contract's `example_request`, indistinguishable on the wire from a paid call (docs/trust-v1.md
 * "Probes"): the same headers and Standard Webhooks signing, and an `exe_<ULID>` execution id
 * (`webhook-id`) like every execution's, so a provider cannot answer probes well and buyers
 * badly. `ok` when
 * the provider answers 2xx with `{result}` valid against its own `output_schema` and the
 * contract's (`contract`, the offer that defines the capability; docs/marketplace.md: an offer that
 * joined a contract is routed to only once this passed), signed by the provider's address. The
 * record is public (`evidence.probe` of /registry and the capability page), so it never names the
 * provider's own endpoint (issue 23 item 9): `url` is `publicUrl`, the gateway's URL that serves
 * the capability (`{PUBLIC_BASE_URL}/api/v1/execute`); with the HTTP status the provider answered
 * (0 without a response), the SHA-256 of the answer's bytes, and `ms` the call's duration.
 * `outcome` and `latency_ms` (measured here) are the probe's evidence for the offer's trust score
 * (`TrustRecords.record`, README "Trust scores").
 */
export async function probeProviderCapability(
  client: ProviderClient,
  record: ProviderRecord,
  offer: ProviderOffer,
  publicUrl: string,
  contract: ProviderOffer = offer,
): Promise<{ capabilityId: string; record: ProbeRecord; ms: number; outcome: TrustOutcomeKind; latency_ms: number }> {
  const capabilityId = offerCapabilityId(offer);
  const messageId = `exe_${ulid()}`;
  const started = performance.now();
  const outcome = await client.call(
    record.endpoint,
    record.secret,
    { capability_id: capabilityId, execution_id: messageId, input: contract.example_request },
    { timeoutMs: offer.timeout_ms, messageId },
  );
  const latency_ms = performance.now() - started;
  let ok = false;
  let kind: TrustOutcomeKind = outcome.ok ? 'invalid_output' : outcome.reason === 'timeout' ? 'timeout' : 'failed';
  let bytes: Buffer = Buffer.alloc(0);
  if (outcome.ok) {
    bytes = outcome.raw;
    const result = (outcome.body as { result?: unknown } | null)?.result;
    const signature = (outcome.body as { signature?: unknown } | null)?.signature;
    const valid = result !== null && typeof result === 'object' && !Array.isArray(result) && compileJsonSchema(offer.output_schema, 'output_schema')(result);
    ok =
      valid &&
      compileJsonSchema(contract.output_schema, 'output_schema')(result) &&
      typeof signature === 'string' &&
      (await verifyResultSignature({ address: record.address, executionId: messageId, result, signature: signature as `0x${string}` }));
    kind = ok ? 'succeeded' : valid ? 'invalid_signature' : 'invalid_output';
  }
  return {
    capabilityId,
    outcome: kind,
    latency_ms,
    ms: outcome.ms,
    record: {
      ok,
      checked_at: new Date().toISOString(),
      probe: { url: publicUrl, method: 'POST', status: probeStatus(outcome.status), body_sha256: createHash('sha256').update(bytes).digest('hex') },
    },
  };
}
