/**
 * What the refund queue and worker report as it happens, for metrics (the part of
 * `PaymentObserver` of @acg/payments that is the treasury's). Every method is optional, is called
 * synchronously and must not throw or block.
 */
export interface RefundObserver {
  /** A refund recorded and queued; once per operation however often it is enqueued. `amount`: USDC base units. */
  refundQueued?(e: { amount: string }): void;
  /** A refund transfer mined (treasury → payer). */
  refundSent?(e: { amount: string }): void;
  /** A refund attempt failed; the queue retries it. */
  refundAttemptFailed?(): void;
}
