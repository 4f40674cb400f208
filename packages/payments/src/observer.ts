import type { RefundObserver } from '@acg/treasury';

/**
 * What the payment side reports as it happens, for metrics: the apps pass `PaymentMetrics` of
 * @acg/observability (Prometheus), a test may pass a recorder. Every method is optional, is
 * called synchronously on the payment's path and must not throw or block. The refund
 * events are {@link RefundObserver}'s (@acg/treasury).
 */
export interface PaymentObserver extends RefundObserver {
  /** A payment settled on chain for the paid `route` (`execute`, `jobs`, ...); `amount`: integer string, USDC base units. */
  settled?(e: { route: string; amount: string }): void;
  /** A payment refused with a 402 and this x402 reason code (a request without payment is a challenge, not a refusal). */
  refused?(e: { reason: string }): void;
}
