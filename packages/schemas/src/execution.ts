import { z } from 'zod';
import { ExecutionId, JobId, QuoteId } from './ids.js';
import { Address, CapabilityId, DateTime, Hash32, HexData, JsonObject, UintString } from './primitives.js';
import { AnsweringProvider, Routing, RoutingAttempt } from './routing.js';

/** Body of `POST /api/v1/execute`: `capability_id` and the capability's `input` object (docs/spec-notes.md 2.7, 4). */
export const ExecuteRequest = z.strictObject({
  capability_id: CapabilityId,
  input: JsonObject,
  /** A live quote (`POST /api/v1/quotes`) for this capability and this input: the call pays exactly its price on its provider. */
  quote_id: QuoteId.optional(),
  /** Which offers of the capability may answer, and in which order they are tried (docs/marketplace.md "Routing"). */
  routing: Routing.optional(),
});
export type ExecuteRequest = z.infer<typeof ExecuteRequest>;

/** Execution status: `SUCCEEDED | FAILED` (docs/spec-notes.md 3; FAILED per docs/decisions.md "x402 payments"). */
export const ExecutionStatus = z.enum(['SUCCEEDED', 'FAILED']);
export type ExecutionStatus = z.infer<typeof ExecutionStatus>;

/**
 * Settled payment behind an execution (docs/spec-notes.md 2.7): `tx_hash` of the on-chain settlement and
 * `amount` charged, an integer string in asset base units (USDC: 6 decimals, `"1000"` = 0.001 USDC).
 * `tx_hash` is absent for an x402 `batch-settlement` voucher: it is charged off-chain in its channel and
 * claimed later in batches (docs/decisions.md "batch-settlement").
 */
export const ExecutionPayment = z.object({
  tx_hash: Hash32.optional(),
  amount: UintString,
  /**
   * Where the settlement stands on chain (docs/decisions.md "Confirmations and reorgs"): `settled`
   * (mined, not final yet), `final` (its block can no longer be reorganized out), `unpaid` (reorged
   * out and its authorization expired before it could be resubmitted: the result is not delivered).
   * Shown on stored executions; absent on an answer that predates tracking.
   */
  status: z.enum(['settled', 'final', 'unpaid']).optional(),
});
export type ExecutionPayment = z.infer<typeof ExecutionPayment>;

/** Refund state: `pending` (queued) or `sent` (transferred on-chain) (docs/decisions.md "x402 payments"). */
export const RefundStatus = z.enum(['pending', 'sent']);
export type RefundStatus = z.infer<typeof RefundStatus>;

/**
 * Refund of a payment (docs/decisions.md): `status`, `tx_hash` of the refund transfer once sent, and
 * `amount` refunded as an integer string in USDC base units.
 */
export const Refund = z.object({
  status: RefundStatus,
  tx_hash: Hash32.optional(),
  amount: UintString,
  /** Once `sent`: `unconfirmed` until its block is final, then `final` (docs/decisions.md "Confirmations and reorgs"); `tx_hash` follows a re-send after a reorg. */
  finality: z.enum(['unconfirmed', 'final']).optional(),
});
export type Refund = z.infer<typeof Refund>;

/**
 * Why a capability failed: a stable snake_case `code` (e.g. `upstream_unavailable`) and a
 * human-readable `message` that never carries upstream text verbatim (docs/decisions.md "Errors").
 */
export const ExecutionError = z.object({
  code: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be snake_case'),
  message: z.string().min(1),
});
export type ExecutionError = z.infer<typeof ExecutionError>;

/** A successful execution: `{execution_id, status: "SUCCEEDED", result, payment}` (docs/spec-notes.md 2.7). */
export const ExecutionSucceeded = z.object({
  execution_id: ExecutionId,
  status: z.literal('SUCCEEDED'),
  result: JsonObject,
  payment: ExecutionPayment,
  /**
   * JWS compact proof of this result (docs/decisions.md "Proofs and receipts"): EdDSA, `kid` in the header,
   * payload `{execution_id, capability_id, input_sha256, result_sha256, payment, provider,
   * issued_at}`; verify with the JWKS at the catalog's `jwks_url`. Absent when the gateway has no
   * receipt key configured.
   */
  proof: z.string().optional(),
  /** The provider whose offer answered (a capability offered by providers; docs/marketplace.md). */
  provider: AnsweringProvider.optional(),
  /** The offers tried, in order, the last one the answer's (docs/marketplace.md "Routing"). */
  attempts: z.array(RoutingAttempt).optional(),
  /** The part of the payment above the answering offer's price, refunded on-chain (docs/marketplace.md "Money"). */
  refund: Refund.optional(),
});
export type ExecutionSucceeded = z.infer<typeof ExecutionSucceeded>;

/**
 * A failed execution after settlement (docs/decisions.md "x402 payments"):
 * `{execution_id, status: "FAILED", result: null, error, payment, refund}`; the payment is refunded.
 */
export const ExecutionFailed = z.object({
  execution_id: ExecutionId,
  status: z.literal('FAILED'),
  result: z.null(),
  error: ExecutionError,
  payment: ExecutionPayment,
  refund: Refund,
});
export type ExecutionFailed = z.infer<typeof ExecutionFailed>;

/** Response of `POST /api/v1/execute` (docs/spec-notes.md 2.7), discriminated by `status`. */
export const ExecutionResponse = z.discriminatedUnion('status', [ExecutionSucceeded, ExecutionFailed]);
export type ExecutionResponse = z.infer<typeof ExecutionResponse>;

/**
 * A refund as stored and served (docs/decisions.md "x402 payments"): the {@link Refund} fields and the
 * `payer` the refund is sent to.
 */
export const RefundRecord = Refund.extend({ payer: Address });
export type RefundRecord = z.infer<typeof RefundRecord>;

/**
 * A stored execution, what `GET /api/v1/executions/{execution_id}` returns (docs/spec-notes.md 2.7 + docs/decisions.md):
 * `execution_id`, `capability_id`, `status`, `result` (null when FAILED), `error` (FAILED only),
 * the settled `payment`, `refund` (a failed execution's refund once queued, or the part of a routed
 * success's payment above the answering offer's price, written with the record; its current state), `job_id`
 * when a job step ran it, `created_at`/`finished_at` (RFC 3339 UTC) and `duration_ms` (capability
 * run time, milliseconds).
 */
export const ExecutionRecord = z.object({
  execution_id: ExecutionId,
  capability_id: CapabilityId,
  status: ExecutionStatus,
  result: JsonObject.nullable(),
  error: ExecutionError.optional(),
  payment: ExecutionPayment,
  refund: RefundRecord.optional(),
  job_id: JobId.optional(),
  /** The address that paid (x402 payer, or the job's payer); only it may read the record. */
  payer: Address.optional(),
  /** The JWS proof of a SUCCEEDED result (see {@link ExecutionSucceeded}); FAILED executions carry none. */
  proof: z.string().optional(),
  /**
   * A provider capability's answer signature: EIP-191 by the provider's registered address over
   * `acg-result:<execution_id>:<result_sha256>` (RFC 8785 SHA-256 of `result`), verified before the
   * result was accepted. Evidence for disputes.
   */
  provider_signature: HexData.optional(),
  /** The provider whose offer answered, and the offers tried (see {@link ExecutionSucceeded}). */
  provider: AnsweringProvider.optional(),
  attempts: z.array(RoutingAttempt).optional(),
  created_at: DateTime,
  finished_at: DateTime,
  duration_ms: z.number().nonnegative(),
});
export type ExecutionRecord = z.infer<typeof ExecutionRecord>;
