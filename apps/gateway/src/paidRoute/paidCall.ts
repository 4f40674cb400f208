import {
  PaymentChainUnavailableError,
  PaymentSettlementPendingError,
  PaymentConflictError,
  PaymentInProgressError,
  PaymentVerificationUnavailableError,
  type Outcome,
  type PaidRequest,
  type PaidResponse,
  type Paywall,
  type SettledPayment,
} from '@acg/payments';
import { problemDetails, type Problem } from '../trpc/problem.js';

/** A problem answer: status, RFC 9457 body, headers (e.g. `Retry-After`). */
export interface PaymentProblem {
  kind: 'problem';
  status: number;
  body: Problem;
  headers: Record<string, string>;
}

/**
 * What a paid call ended with, whatever the transport:
 * - `payment_required`: the 402 challenge (no payment, or a refused one: `body.reason`);
 * - `response`: the operation's stored answer (fresh, or `replayed` for a payment seen before);
 * - `problem`: the payment could not be taken now (409 conflict or in progress, 503 chain or
 *   facilitator unavailable, with `Retry-After`).
 */
export type PaidCallResult = Extract<PaidResponse, { kind: 'payment_required' }> | Extract<PaidResponse, { kind: 'response' }> | PaymentProblem;

/**
 * The problem for one of the paywall's typed errors (docs/decisions.md "Errors"): PaymentConflictError 409
 * with its `reason` (`payment_conflict`, `idempotency_key_conflict`, `payment_identifier_conflict`),
 * PaymentInProgressError 409 with `Retry-After: 1`, PaymentChainUnavailableError 503
 * `payment_chain_unavailable` (with `payment.status`), PaymentSettlementPendingError 503 `settlement_pending`
 * (with `payment: {status: "unknown", tx_hash, authorization: {from, nonce}}`), PaymentVerificationUnavailableError 503.
 * Undefined for any other error.
 */
export function paymentProblem(e: unknown): PaymentProblem | undefined {
  const of = (status: number, detail: string, extensions: Record<string, unknown> = {}, headers: Record<string, string> = {}): PaymentProblem => ({
    kind: 'problem',
    status,
    body: problemDetails(status, detail, extensions),
    headers,
  });
  if (e instanceof PaymentConflictError) return of(409, e.message, { reason: e.reason });
  if (e instanceof PaymentInProgressError) return of(409, e.message, { reason: 'payment_in_progress' }, { 'Retry-After': '1' });
  if (e instanceof PaymentSettlementPendingError) {
    // the settlement is named: its transaction and the authorization it spends (issue 33)
    const { txHash, authorization } = e.settlement;
    const payment = { status: e.payment, ...(txHash ? { tx_hash: txHash } : {}), authorization };
    return of(503, e.message, { reason: e.reason, payment }, { 'Retry-After': String(e.retryAfterSeconds) });
  }
  if (e instanceof PaymentChainUnavailableError) {
    return of(503, e.message, { reason: e.reason, payment: { status: e.payment } }, { 'Retry-After': String(e.retryAfterSeconds) });
  }
  if (e instanceof PaymentVerificationUnavailableError) return of(503, e.message, { reason: 'payment_verification_unavailable' }, { 'Retry-After': '5' });
  return undefined;
}

/**
 * One paid call, transport-independent (REST and tRPC through `paid()`, MCP tools): the paywall's
 * begin → `run` once with the settled payment → complete (store the answer, refund a failure),
 * docs/decisions.md "x402 payments". The payment comes from `request.getHeader` (`PAYMENT-SIGNATURE`,
 * `X-PAYMENT`) or `request.paymentPayload` (MCP `_meta["x402/payment"]`). `run` is called at most
 * once per payment; a throw is a refunded 500/503 failure. The paywall's typed errors come back as
 * a {@link PaymentProblem}; anything else (e.g. Redis unavailable before settlement) is rethrown.
 */
export async function payForCall(paywall: Paywall, request: PaidRequest, run: (payment: SettledPayment) => Promise<Outcome>): Promise<PaidCallResult> {
  try {
    const response = await paywall.handle(request, run);
    return response;
  } catch (e) {
    const p = paymentProblem(e);
    if (p) return p;
    throw e;
  }
}
