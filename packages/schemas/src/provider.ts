import { z } from 'zod';
import { ExecutionId, ProviderId } from './ids.js';
import { Address, CapabilityId, DateTime, DecimalString, Hash32, HexData, JsonObject, prefixedUlid, UintString, UsdcDecimalString } from './primitives.js';
import { OfferTrustView } from './trust.js';

/**
 * Wire schemas of third-party providers (docs/spec-notes.md 1 "Third parties may become providers"; docs/decisions.md
 * "Providers"): onboarding with EIP-191, offers, the gateway → provider call, the ledger, payouts
 * and disputes. Money is integer USDC base units (6 decimals) as decimal strings, except an
 * offer's `price_usdc`, a decimal USDC amount as the provider writes it.
 */

/** Payout id: `pay_` + ULID. */
export const PayoutId = prefixedUlid('pay');
export type PayoutId = z.infer<typeof PayoutId>;

/** Dispute id: `dsp_` + ULID. */
export const DisputeId = prefixedUlid('dsp');
export type DisputeId = z.infer<typeof DisputeId>;

/** A provider's display name, also the catalog's `provider` field: 1-64 characters, letters, digits, space, `.`, `_`, `-`. */
export const ProviderName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, 'must start with a letter or digit and use letters, digits, space, ".", "_" or "-"');

/** The `<name>` half of a provider capability id: lowercase letters, digits and `_`, starting with a letter, at most 48 characters. */
export const OfferName = z
  .string()
  .min(1)
  .max(48)
  .regex(/^[a-z][a-z0-9_]*$/, 'must be lowercase letters, digits or _, starting with a letter');

/**
 * The `<product>` half of a provider capability id (default `intelligence`): one of docs/spec-notes.md 2.2's
 * products that third parties may offer in, `intelligence` or `mev` (`gateway` and `builder` are
 * the gateway's own).
 */
export const OfferProduct = z.enum(['intelligence', 'mev']);

/** Per-call timeout of a provider capability in milliseconds: 1000..120000, default 30000 (docs/decisions.md "Providers"). */
export const OfferTimeoutMs = z.int().min(1000).max(120_000);

/**
 * One capability a provider offers (packages/provider-directory README). Either it creates a contract, whose
 * id is `<product>.<name>` (unique across the catalog), or it joins one by `capability_id`
 * (docs/marketplace.md). `input_schema` and `output_schema` are JSON Schema 2020-12 objects
 * (checked with Ajv at registration: an invalid schema is a 400); `example_request` must be valid
 * against `input_schema` (the prober sends it). `price_usdc` is a decimal USDC amount with at most 6
 * decimals, > 0.
 */
export const ProviderOffer = z
  .strictObject({
    name: OfferName.optional(),
    product: OfferProduct.default('intelligence'),
    /**
     * Joins the existing contract with this id instead of creating one (docs/marketplace.md
     * "Contracts and offers"): given instead of `name`/`product`; `input_schema` must accept the
     * contract's `example_request` (else 422 `contract_mismatch`), and the offer is routed to only
     * once a probe's output validated against the contract's `output_schema`.
     */
    capability_id: CapabilityId.optional(),
    description: z.string().min(1).max(500),
    price_usdc: UsdcDecimalString.refine((s) => /[1-9]/.test(s), 'must be greater than 0'),
    input_schema: JsonObject,
    output_schema: JsonObject,
    example_request: z.unknown(),
    timeout_ms: OfferTimeoutMs.default(30_000),
    accepts_objective: z.boolean().default(false),
  })
  .refine((o) => (o.name === undefined) !== (o.capability_id === undefined), {
    message: 'give either name (create a contract) or capability_id (join one), not both',
    path: ['name'],
  });
export type ProviderOffer = z.infer<typeof ProviderOffer>;
export type ProviderOfferInput = z.input<typeof ProviderOffer>;

/** What a provider challenge authorizes: `register` (POST), `update` (PUT) or `retire` (DELETE /api/v1/providers/{provider_id}). */
export const ProviderAction = z.enum(['register', 'update', 'retire']);
export type ProviderAction = z.infer<typeof ProviderAction>;

/**
 * Body of `POST /api/v1/providers/challenge`: the provider's payout address on the payment chain,
 * the `action` the signature will authorize, `provider_id` for `update` and `retire`, and for
 * `register` and `update` the exact `name`, `endpoint` and `capabilities` that will be sent: the
 * message names the action, the provider and the SHA-256 of their RFC 8785 canonical JSON, so a
 * signature works only for that action and that body (issue 23 item 8).
 */
export const ProviderChallengeRequest = z.strictObject({
  address: Address,
  action: ProviderAction,
  provider_id: ProviderId.optional(),
  name: ProviderName.optional(),
  endpoint: z.string().url().max(2048).optional(),
  capabilities: z.array(ProviderOffer).min(1).max(20).optional(),
});
export type ProviderChallengeRequest = z.infer<typeof ProviderChallengeRequest>;

/**
 * Answer of `POST /api/v1/providers/challenge`: the plain-text `message` to sign with EIP-191
 * (`personal_sign`), naming the gateway host, the address, the nonce and the issue time; valid
 * until `expires_at` (10 minutes), single use.
 */
export const ProviderChallenge = z.object({ message: z.string(), nonce: z.string(), expires_at: DateTime });
export type ProviderChallenge = z.infer<typeof ProviderChallenge>;

/** A signed challenge: the exact `message` from the challenge and its EIP-191 `signature` by `address`. */
export const SignedChallenge = z.object({ address: Address, message: z.string().min(1).max(2000), signature: HexData });
export type SignedChallenge = z.infer<typeof SignedChallenge>;

/**
 * Body of `POST /api/v1/providers` and `PUT /api/v1/providers/{provider_id}`: a signed challenge,
 * the name, the endpoint (https; http to loopback only under the development webhook policy;
 * SSRF-safe) and 1..20 offers.
 */
export const ProviderRegistration = SignedChallenge.extend({
  name: ProviderName,
  endpoint: z.string().url().max(2048),
  capabilities: z.array(ProviderOffer).min(1).max(20),
});
export type ProviderRegistration = z.infer<typeof ProviderRegistration>;
export type ProviderRegistrationInput = z.input<typeof ProviderRegistration>;

/** Catalog status of a provider capability: PILOT until a signed probe with `example_request` passes, LIVE while probes pass, STALE after a failed probe. */
export const ProviderCapabilityStatus = z.enum(['PILOT', 'LIVE', 'STALE']);

/**
 * Answer of `POST /api/v1/providers` (201) and `PUT`: the provider and its capabilities.
 * `signing_secret` (`whsec_` + base64) is shown once; the gateway signs every call to the endpoint
 * with it (Standard Webhooks). A PUT rotates it.
 */
export const ProviderRegistered = z.object({
  provider_id: ProviderId,
  name: ProviderName,
  address: Address,
  endpoint: z.string(),
  capabilities: z.array(z.object({ id: CapabilityId, status: ProviderCapabilityStatus })),
  signing_secret: z.string().regex(/^whsec_[A-Za-z0-9+/=]+$/),
});
export type ProviderRegistered = z.infer<typeof ProviderRegistered>;

/** Body of `DELETE /api/v1/providers/{provider_id}`: a fresh signed challenge by the provider's address. */
export const ProviderRetirement = SignedChallenge;
export type ProviderRetirement = z.infer<typeof ProviderRetirement>;

/**
 * What the gateway sends to `POST {endpoint}` (docs/decisions.md "Providers"), with Standard Webhooks headers
 * (`webhook-id` = `execution_id`; a probe is sent exactly like a paid call, docs/trust-v1.md "Probes").
 */
export const ProviderCallRequest = z.object({
  capability_id: CapabilityId,
  execution_id: z.string(),
  input: z.unknown(),
});
export type ProviderCallRequest = z.infer<typeof ProviderCallRequest>;

/**
 * What a provider answers with 200: `result`, valid against the offer's `output_schema`. The
 * provider kit adds `signature`: EIP-191 by the provider's address over the text
 * `acg-result:<execution_id>:<result_sha256>` (docs/decisions.md "Proofs and receipts"), where
 * `result_sha256` is lowercase hex SHA-256 of the RFC 8785 canonical JSON of `result`.
 */
export const ProviderCallResponse = z.object({ result: z.unknown(), signature: HexData.optional() });
export type ProviderCallResponse = z.infer<typeof ProviderCallResponse>;

/** Stats of one provider capability: calls, failures (non-2xx, timeout, invalid output), latency p50/p99 in ms (null before a sample). */
export const ProviderCapabilityStats = z.object({
  calls: z.int().nonnegative(),
  failures: z.int().nonnegative(),
  latency_ms_p50: z.number().nullable(),
  latency_ms_p99: z.number().nullable(),
});
export type ProviderCapabilityStats = z.infer<typeof ProviderCapabilityStats>;

/** A provider's ledger (integer strings, USDC base units): `held` through the dispute window, then `available`, then `paid`. */
export const ProviderBalance = z.object({ held: UintString, available: UintString, paid: UintString });
export type ProviderBalance = z.infer<typeof ProviderBalance>;

/** Payout states: `reserved` (amount taken from available, transfer being sent), `sent` (mined), `failed` (reverted; amount returned to available). */
export const PayoutStatus = z.enum(['reserved', 'sent', 'failed']);

/** One payout: one USDC transfer treasury → provider address. `amount` integer string, USDC base units. */
export const PayoutView = z.object({
  payout_id: PayoutId,
  amount: UintString,
  tx_hash: Hash32.nullable(),
  status: PayoutStatus,
  /** Once `sent`: `unconfirmed` until its block is final, then `final` (docs/decisions.md "Confirmations and reorgs"); `tx_hash` follows a re-send after a reorg. */
  finality: z.enum(['unconfirmed', 'final']).optional(),
  created_at: DateTime,
});
export type PayoutView = z.infer<typeof PayoutView>;

/** Dispute states: `open` (share held), `refunded` (buyer refunded the full price on-chain), `released` (share available to the provider). */
export const DisputeStatus = z.enum(['open', 'refunded', 'released']);

/** Body of `POST /api/v1/executions/{execution_id}/dispute` (payer's bearer token). */
export const DisputeOpenRequest = z.strictObject({ reason: z.string().min(1).max(2000) });
/** Body of `POST /api/v1/disputes/{dispute_id}/response` (provider's bearer token). */
export const DisputeResponseRequest = z.strictObject({ statement: z.string().min(1).max(4000) });
/** Body of `POST /api/v1/disputes/{dispute_id}/resolve` (`Authorization: Bearer <ADMIN_TOKEN>`). */
export const DisputeResolveRequest = z.strictObject({ outcome: z.enum(['refund', 'release']) });

/** A dispute as the buyer, the provider and the admin see it (docs/decisions.md "Providers"). `amount` = the price paid, USDC base units. */
export const DisputeView = z.object({
  dispute_id: DisputeId,
  execution_id: ExecutionId,
  capability_id: CapabilityId,
  provider_id: ProviderId,
  payer: Address,
  amount: UintString,
  status: DisputeStatus,
  reason: z.string(),
  statement: z.string().nullable(),
  opened_at: DateTime,
  responded_at: DateTime.nullable(),
  resolved_at: DateTime.nullable(),
  /** who resolved it: `admin`, or `auto` after PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS */
  resolved_by: z.enum(['admin', 'auto']).nullable(),
  /**
   * Evidence from both sides (docs/decisions.md "Proofs and receipts"), on `GET /api/v1/disputes/{id}`: the
   * delivered `result`, the gateway's JWS `proof` of it, and the provider's EIP-191
   * `provider_signature` over it, from the execution record.
   */
  evidence: z.object({ result: JsonObject.nullable(), proof: z.string().optional(), provider_signature: HexData.optional() }).optional(),
  /** the on-chain refund of an upheld dispute, once sent */
  refund: z.object({ status: z.enum(['pending', 'sent']), tx_hash: Hash32.optional() }).nullable(),
});
export type DisputeView = z.infer<typeof DisputeView>;

/** `GET /api/v1/providers/{provider_id}` (bearer token of the provider's address): the provider, balances, capability stats, payouts, disputes. */
export const ProviderView = z.object({
  provider_id: ProviderId,
  name: ProviderName,
  address: Address,
  endpoint: z.string(),
  status: z.enum(['active', 'retired']),
  created_at: DateTime,
  capabilities: z.array(
    z.object({
      id: CapabilityId,
      status: ProviderCapabilityStatus,
      price_usdc: DecimalString,
      stats: ProviderCapabilityStats,
      /** the offer's trust-v1 score, inputs, counts, dispute-hold tier and suspension (docs/trust-v1.md); absent for a retired provider */
      trust: OfferTrustView.optional(),
    }),
  ),
  balance: ProviderBalance,
  payouts: z.array(PayoutView),
  disputes: z.array(DisputeView),
});
export type ProviderView = z.infer<typeof ProviderView>;
