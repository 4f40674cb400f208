import type { PaymentObserver } from '@acg/payments';
import { RefundQueue } from '@acg/treasury';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { ProviderLedger, type ProviderLedgerOptions } from './ledger.js';

/** Options of {@link createRefundsAndLedger}. */
export interface RefundsAndLedgerOptions {
  redis: Redis;
  keys: RedisKeys;
  /** The refund queue's BullMQ connection (`maxRetriesPerRequest: null`). */
  bullRedis: Redis;
  /** PROVIDER_FEE_BPS (basis points, 0..10000) and PROVIDER_DISPUTE_WINDOW_SECONDS (seconds): `config.providers`. */
  providers: { feeBps: number; disputeWindowSeconds: number };
  /** Told once per operation when its refund is first recorded (the process's `PaymentMetrics`). */
  observer?: PaymentObserver;
  /** The hold of a credit, seconds (the offer's trust tier: `creditHoldSeconds` of `@acg/provider-directory`); default the dispute window. */
  holdSeconds?: ProviderLedgerOptions['holdSeconds'];
}

/**
 * The refund queue (`RefundQueue` of `@acg/treasury`) and the provider ledger whose dispute refunds
 * it enqueues, wired the one way the gateway and the worker both use (README "API"). Opens nothing:
 * the queue uses `bullRedis`; closing it is the caller's (`refunds.close()`).
 *
 * @returns `refunds`, `providerLedger`.
 * @throws RangeError - from `ProviderLedger` when `feeBps` is not an integer 0..10000 or the window is negative.
 */
export function createRefundsAndLedger(o: RefundsAndLedgerOptions): { refunds: RefundQueue; providerLedger: ProviderLedger } {
  const refunds = new RefundQueue(o.redis, o.keys, o.bullRedis, { observer: o.observer });
  const providerLedger = new ProviderLedger({
    redis: o.redis,
    keys: o.keys,
    feeBps: o.providers.feeBps,
    disputeWindowSeconds: o.providers.disputeWindowSeconds,
    refunds,
    holdSeconds: o.holdSeconds,
  });
  return { refunds, providerLedger };
}
