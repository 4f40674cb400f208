import { redisHealth } from '@acg/redis';
import type { Logger } from 'pino';
import type { PaidResponse } from './challenge.js';
import type { SettledPayment } from './settle.js';

type Answer = Extract<PaidResponse, { kind: 'response' }>;

/** Seconds a client is told to wait before sending the same payment again while the store is out. */
export const STORE_OUTAGE_RETRY_AFTER_SECONDS = 5;

/**
 * The answer of a paid call whose payment settled, within the Redis outage bound: `work` (the
 * operation, then storing its answer with the reservation, retried through an outage of up to
 * `REDIS_OUTAGE_TOLERANCE_MS`) is awaited while Redis answers; once the connection's health check
 * (`redisHealth` of @acg/redis) says Redis is down, the client gets a 503 problem+json at once
 * (`reason: "service_unavailable"`, `Retry-After`, `payment: {status: "settled", tx_hash, amount}`)
 * and `work` goes on in the background: the result is stored when Redis is back, and the same
 * payment sent again returns it (nothing runs or is charged again). Beyond the tolerance the
 * crash-recovery sweep refunds it. Connections without the health check (a Cluster) wait for
 * `work` as before. docs/operating.md "Redis outage tolerance".
 */
export async function answerWithinStoreOutage<A extends Answer>(
  work: Promise<A>,
  redis: object,
  payment: SettledPayment,
  log: Logger,
  pollMs = 100,
): Promise<A | Answer> {
  const health = redisHealth(redis);
  if (!health) return work;
  let timer: NodeJS.Timeout | undefined;
  const down = new Promise<'down'>((resolve) => {
    timer = setInterval(() => {
      if (health.down) resolve('down');
    }, pollMs);
  });
  try {
    const first = await Promise.race([work, down]);
    if (first !== 'down') return first;
  } finally {
    clearInterval(timer);
  }
  work.then(
    () => log.info({ operationId: payment.operationId }, 'paid answer stored after the Redis outage'),
    (e: unknown) =>
      log.error(
        { operationId: payment.operationId, err: String((e as Error)?.message).slice(0, 200) },
        'paid answer not stored; the crash-recovery sweep takes it over',
      ),
  );
  return {
    kind: 'response',
    status: 503,
    body: {
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: `Your payment settled; the store is briefly unavailable, so the answer is kept for you once it is back. Send the same payment again after ${STORE_OUTAGE_RETRY_AFTER_SECONDS} s to get it: it does not run or charge again.`,
      reason: 'service_unavailable',
      code: 'service_unavailable',
      payment: { status: 'settled', tx_hash: payment.txHash, amount: payment.amount },
    },
    headers: { 'Retry-After': String(STORE_OUTAGE_RETRY_AFTER_SECONDS), 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' },
    replayed: false,
  };
}
