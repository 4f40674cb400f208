/**
 * What the payment side reports as it happens, for metrics: the apps pass `PaymentMetrics` of
 * @acg/observability (Prometheus), a test may pass a recorder. Every method is optional, is
 * called synchronously on the payment's path and must not throw or block.
 */
export interface PaymentObserver {
  /** A payment settled on chain for the paid `route` (`execute`, `jobs`, ...); `amount`: integer string, USDC base units. */
  settled?(e: { route: string; amount: string }): void;
  /** A payment refused with a 402 and this x402 reason code (a request without payment is a challenge, not a refusal). */
  refused?(e: { reason: string }): void;
  /** A refund recorded and queued; once per operation however often it is enqueued. `amount`: USDC base units. */
  refundQueued?(e: { amount: string }): void;
  /** A refund transfer mined (treasury → payer). */
  refundSent?(e: { amount: string }): void;
  /** A refund attempt failed; the queue retries it. */
  refundAttemptFailed?(): void;
}
