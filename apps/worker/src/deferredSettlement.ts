import type { StoredJob } from '@acg/jobs';
import { paymentKeys, recordDeferredCharge } from '@acg/payments/commands';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * The job runner's `settleDeferred` (docs/decisions.md "Payment schemes", jobs): an ended job paid
 * with x402 `upto` records what its steps spent (`job.payment.amount`) as the amount to settle on
 * its payment's reservation (`recordDeferredCharge` of `@acg/payments/commands`: `pending` →
 * `settling`, or `completed` with 0 when nothing was spent), then publishes the reservation key on
 * `paymentKeys.deferredSettlements`, so a gateway settles it at once (`Paywall.settleRecorded`). The
 * worker never settles: only the facilitator named in the payer's Permit2 witness may, and that is
 * the gateway's. A lost message only delays the settlement to the gateway's deferred recovery (a
 * recorded settlement older than 2 minutes, every 60 s). Idempotent. Throws on a Redis error (the
 * runner retries the job; the record step is a compare-and-set).
 */
export async function recordJobSettlement(redis: Redis, keys: RedisKeys, log: Logger, job: StoredJob): Promise<void> {
  const authKey = job.payment.authorization;
  if (!authKey) {
    log.error({ job_id: job.job_id }, 'an upto job has no payment reservation to settle; left for an operator');
    return;
  }
  const recorded = await recordDeferredCharge(redis, {
    authKey,
    inFlightKey: paymentKeys.authorizationsInFlight(keys),
    operationId: job.job_id,
    amount: job.payment.amount,
  });
  if (recorded === 'refused') {
    log.error(
      { job_id: job.job_id, amount: job.payment.amount },
      "an upto job's settlement could not be recorded (reservation gone or another amount); left for an operator",
    );
    return;
  }
  if (recorded === 'recorded') await redis.publish(paymentKeys.deferredSettlements(keys), authKey);
  log.info({ job_id: job.job_id, amount: job.payment.amount, recorded }, 'upto job settlement recorded');
}
