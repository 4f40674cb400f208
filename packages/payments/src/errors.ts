import { ProblemError } from '@acg/schemas';

/**
 * A payment that cannot be accepted. `reason` is a stable machine code (x402 `invalidReason`
 * style, e.g. `invalid_exact_evm_payload_signature`), `message` is safe to show the caller:
 * it never carries raw upstream text, calldata or keys (docs/decisions.md "Errors").
 */
export class PaymentError extends Error {
  override name = 'PaymentError';
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** The same payment is being settled or executed by another request right now. */
export class PaymentInProgressError extends ProblemError {
  override name = 'PaymentInProgressError';
  constructor() {
    super(
      409,
      'This payment authorization is being processed by another request; retry shortly to get its result.',
      { reason: 'payment_in_progress' },
      { 'Retry-After': '1' },
    );
  }
}

/** A payment authorization already used for a different request (another body or resource): 409 with its `reason`. */
export class PaymentConflictError extends ProblemError {
  override name = 'PaymentConflictError';
  /** Stable machine code for the problem's `reason`. */
  readonly reason: 'payment_conflict' | 'idempotency_key_conflict' | 'payment_identifier_conflict';
  /**
   * `payment`: the authorization paid for another request; `idempotency`: the Idempotency-Key was
   * used with another body; `payment_identifier`: the x402 payment-identifier id was used with
   * another PaymentPayload.
   */
  constructor(readonly kind: 'payment' | 'idempotency' | 'payment_identifier') {
    super(
      409,
      kind === 'payment'
        ? 'This payment authorization was already used for a different request; sign a new payment.'
        : kind === 'idempotency'
          ? 'This Idempotency-Key was already used with a different request body.'
          : 'This payment identifier was already used with a different payment; send the same payment to get its result, or a new identifier for a new payment.',
    );
    this.reason = kind === 'payment' ? 'payment_conflict' : kind === 'idempotency' ? 'idempotency_key_conflict' : 'payment_identifier_conflict';
  }

  protected override members(): Record<string, unknown> {
    return { reason: this.reason };
  }
}

/**
 * The payment chain (or the facilitator's node) could not be reached while verifying or settling
 * (503 with Retry-After). `payment` says what the payer should assume: `not_charged` (verification
 * failed to run; nothing was broadcast) or `unknown` (settlement may have been broadcast: the
 * reservation is kept and reconciled on chain later, so a retry with the same payment gets the
 * result or nothing is charged; the crash-recovery sweep refunds a settled payment whose request
 * never completed). `reason` is the stable code `payment_chain_unavailable`.
 */
export class PaymentChainUnavailableError extends ProblemError {
  override name = 'PaymentChainUnavailableError';
  readonly reason: 'payment_chain_unavailable' | 'settlement_pending' = 'payment_chain_unavailable';
  constructor(
    readonly payment: 'not_charged' | 'unknown',
    readonly retryAfterSeconds = 10,
  ) {
    super(
      503,
      payment === 'not_charged'
        ? 'The payment chain is unreachable, so the payment could not be verified; nothing was charged. Retry later.'
        : 'The payment chain became unreachable while the payment was being settled; its outcome is unknown. Retry later with the same payment: it is charged at most once, and the gateway answers with the result or refunds it.',
    );
  }

  /** 503 `payment_chain_unavailable` with `payment.status` (`not_charged` or `unknown`). */
  protected override members(): Record<string, unknown> {
    return { reason: this.reason, payment: { status: this.payment } };
  }

  protected override answerHeaders(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}

/**
 * The settlement was broadcast and the chain answers, but it is not confirmed yet (stuck behind a
 * nonce gap, dropped and being replaced, or slow): 503 `settlement_pending` with Retry-After, naming
 * the settlement (`txHash`, the transaction broadcast) and the EIP-3009 authorization (`from`,
 * `nonce`), never "chain unreachable". The reservation is kept (`settle_unknown`): a retry with the
 * same payment reconciles it against the token (settled → the result; unused → released), and the
 * crash-recovery sweep refunds a settled one nobody retries. A `PaymentChainUnavailableError` with
 * `payment: "unknown"`, so every handler of that error handles this one.
 */
export class PaymentSettlementPendingError extends PaymentChainUnavailableError {
  override name = 'PaymentSettlementPendingError';
  override readonly reason = 'settlement_pending';
  constructor(readonly settlement: { txHash?: `0x${string}`; authorization: { from: `0x${string}`; nonce: `0x${string}` } }) {
    super('unknown');
    this.message = `The settlement transaction ${settlement.txHash ?? '(not yet known)'} of authorization ${settlement.authorization.nonce} from ${settlement.authorization.from} was broadcast but is not confirmed yet; its outcome is unknown. Retry later with the same payment: it is charged at most once, and the gateway answers with the result or refunds it.`;
  }

  /** 503 `settlement_pending` naming the settlement: `payment: {status: "unknown", tx_hash, authorization: {from, nonce}}`. */
  protected override members(): Record<string, unknown> {
    const { txHash, authorization } = this.settlement;
    return { reason: this.reason, payment: { status: this.payment, ...(txHash ? { tx_hash: txHash } : {}), authorization } };
  }
}
