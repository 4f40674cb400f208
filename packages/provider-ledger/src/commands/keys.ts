import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of the provider ledger (every key under the `{pl}` hash tag, so its multi-key Lua scripts stay in one Redis Cluster slot). Each takes the deployment's {@link RedisKeys} (its prefix,
 * `acg:` or `{acg}:` on a Redis Cluster) first, so every key of a deployment shares its prefix.
 */
export const providerLedgerKeys = {
  /** A ledger entry of a provider execution (hash: payer, provider, price, share, fee, status, matures_at...). */
  providerLedgerEntry: (keys: RedisKeys, executionId: string): string => `${keys.prefix}pl:{pl}:entry:${executionId}`,
  /** A provider's balance (hash: held, available, reserved, paid, USDC base units; address). */
  providerBalance: (keys: RedisKeys, providerId: string): string => `${keys.prefix}pl:{pl}:bal:${providerId}`,
  /** A provider's held entries by maturity (sorted set: execution id → matures_at, unix ms). */
  providerMaturing: (keys: RedisKeys, providerId: string): string => `${keys.prefix}pl:{pl}:maturing:${providerId}`,
  /** A provider's payouts (sorted set: payout id → created_at, unix ms). */
  providerPayouts: (keys: RedisKeys, providerId: string): string => `${keys.prefix}pl:{pl}:payouts:${providerId}`,
  /** A provider's disputes (sorted set: dispute id → opened_at, unix ms). */
  providerDisputes: (keys: RedisKeys, providerId: string): string => `${keys.prefix}pl:{pl}:disputes:${providerId}`,
  /** A payout record (`pay_...`; hash: amount, status, signed transaction...). */
  providerPayout: (keys: RedisKeys, payoutId: string): string => `${keys.prefix}pl:{pl}:payout:${payoutId}`,
  /** A dispute record (`dsp_...`; hash). */
  providerDispute: (keys: RedisKeys, disputeId: string): string => `${keys.prefix}pl:{pl}:dispute:${disputeId}`,
  /** Ids of providers with a ledger (set). */
  providerLedgerProviders: (keys: RedisKeys): string => `${keys.prefix}pl:{pl}:providers`,
  /** Ledger totals (hash: credited, fees, refunded, entries; USDC base units). */
  providerLedgerTotals: (keys: RedisKeys): string => `${keys.prefix}pl:{pl}:totals`,
  /** Payouts in state `reserved`, to reconcile (set of payout ids). */
  providerPayoutsReserved: (keys: RedisKeys): string => `${keys.prefix}pl:{pl}:payouts-reserved`,
  /** Open disputes (sorted set: dispute id → opened_at, unix ms), for auto-resolution. */
  providerDisputesOpen: (keys: RedisKeys): string => `${keys.prefix}pl:{pl}:disputes-open`,
  /** Disputes resolved `refund` whose on-chain refund is not yet enqueued (set of dispute ids). */
  providerRefundsDue: (keys: RedisKeys): string => `${keys.prefix}pl:{pl}:refunds-due`,
  /**
   * Providers whose payouts wait for an operator (set of provider ids): a payout of theirs is on
   * chain and the ledger could not record it (payoutChain.ts). `SREM` once settled by hand.
   */
  providerPayoutsBlocked: (keys: RedisKeys): string => `${keys.prefix}pl:{pl}:payouts-blocked`,
  /** The payout pass: lease (one pass at a time) and its state (`last_run_ms`, `chain_cursor`), by `part` (`lock`, `state`). */
  providerPayoutPass: (keys: RedisKeys, part: 'lock' | 'state'): string => `${keys.prefix}pl:{pl}:pass:${part}`,
};
