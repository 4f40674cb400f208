import { paymentKeys } from '@acg/payments/commands';
import type { Services } from '../services.js';

/**
 * Runs the paywall's deferred recovery (`Paywall.recoverDeferred`, packages/payments README "Payment
 * schemes") every `intervalMs` (default 60 s) under a Redis lock, so one gateway of a deployment
 * finishes at a time the `upto` settlements a crashed gateway recorded but did not send. Only a
 * gateway can: the payer's Permit2 witness names the facilitator, which is the gateway's. The
 * worker's crash-recovery sweep then completes or refunds them like `exact`. Returns a stop function.
 */
export function startDeferredRecovery(services: Pick<Services, 'paywall' | 'redis' | 'keys' | 'log'>, intervalMs = 60_000): () => void {
  const timer = setInterval(async () => {
    const lock = await services.redis.set(paymentKeys.deferredRecoveryLock(services.keys), '1', 'PX', Math.floor(intervalMs * 0.9), 'NX').catch(() => null);
    if (!lock) return;
    await services.paywall
      .recoverDeferred()
      .catch((e: unknown) => services.log.error({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'deferred settlement recovery failed'));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
