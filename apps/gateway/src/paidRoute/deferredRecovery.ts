import { paymentKeys } from '@acg/payments/commands';
import type { Redis } from 'ioredis';
import type { Services } from '../services.js';

/**
 * Runs the paywall's deferred recovery (`Paywall.recoverDeferred`, packages/payments README "Payment
 * schemes") every `intervalMs` (default 60 s) under a Redis lock, so one gateway of a deployment
 * finishes at a time the `upto` settlements a crashed gateway recorded but did not send, and those
 * a worker recorded for an ended job whose nudge ({@link startDeferredSettlements}) was lost. Only a
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

/**
 * Settles a job's `upto` payment as soon as the worker recorded what it spent (docs/decisions.md
 * "Payment schemes", jobs): listens on `paymentKeys.deferredSettlements` (pub/sub, message = the
 * reservation key) on `subscriber`, a dedicated connection (it enters subscriber mode), and settles
 * each through `Paywall.settleRecorded` (one gateway at a time per reservation, under its lock;
 * the others find it busy or settled). A message lost (no gateway listening, Redis restarted) is
 * picked up by {@link startDeferredRecovery}. Returns a stop function (disconnects `subscriber`).
 */
export async function startDeferredSettlements(services: Pick<Services, 'paywall' | 'keys' | 'log'>, subscriber: Redis): Promise<() => void> {
  const log = services.log.child({ module: 'deferred-settlements' });
  subscriber.on('error', () => undefined); // ioredis reconnects and resubscribes; the recovery covers the gap
  subscriber.on('message', (_channel: string, authKey: string) => {
    void services.paywall
      .settleRecorded(authKey)
      .then((operationId) => operationId && log.info({ operationId }, 'recorded deferred settlement settled'))
      .catch((e: unknown) =>
        log.warn({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'recorded deferred settlement not settled; the recovery retries'),
      );
  });
  await subscriber
    .subscribe(paymentKeys.deferredSettlements(services.keys))
    .catch((e: unknown) => log.warn({ err: String(e).slice(0, 200) }, 'deferred settlement channel unavailable; recovery rounds only'));
  return () => subscriber.disconnect();
}
