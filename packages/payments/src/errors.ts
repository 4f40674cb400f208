/**
 * A payment that cannot be accepted. `reason` is a stable machine code (x402 `invalidReason`
 * style, e.g. `invalid_exact_evm_payload_signature`), `message` is safe to show the caller:
 * it never carries raw upstream text, calldata or keys (DESIGN "Errors").
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
export class PaymentInProgressError extends Error {
  override name = 'PaymentInProgressError';
  constructor() {
    super('This payment authorization is being processed by another request; retry shortly to get its result.');
  }
}

/** A payment authorization already used for a different request (another body or resource). */
export class PaymentConflictError extends Error {
  override name = 'PaymentConflictError';
  /** `payment`: the authorization paid for another request; `idempotency`: the Idempotency-Key was used with another body. */
  constructor(readonly kind: 'payment' | 'idempotency') {
    super(
      kind === 'payment'
        ? 'This payment authorization was already used for a different request; sign a new payment.'
        : 'This Idempotency-Key was already used with a different request body.',
    );
  }
}
