import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of the treasury (refund records, the treasury send lock, the finality of
 * outgoing transfers). Each takes the deployment's {@link RedisKeys} (its prefix, `acg:` or
 * `{acg}:` on a Redis Cluster) first, so every key of a deployment shares its prefix. The names are
 * the ones `@acg/payments` used before the split (issue 34): stored data stays where it was.
 */
export const treasuryKeys = {
  /** Refund records by operation id. */
  refund: (keys: RedisKeys, id: string): string => `${keys.prefix}refund:${id}`,
  /** Lease held around prepare + sign + broadcast of any transaction from a treasury address (refunds and payouts). */
  treasurySendLock: (keys: RedisKeys, address: string): string => `${keys.prefix}treasury-send:${address.toLowerCase()}`,
  /** An outgoing transfer tracked until final (`finality.ts`): kind `settlement | refund | payout` and its operation, refund or payout id. */
  finality: (keys: RedisKeys, kind: string, id: string): string => `${keys.prefix}pay:fin:${kind}:${id}`,
  /** The signed treasury resubmission of a settlement's EIP-3009 authorization after a reorg (a `TransferRecord`: `raw_tx`, `tx_hash`, `nonce`). */
  finalityResend: (keys: RedisKeys, id: string): string => `${keys.prefix}pay:fin:settlement:${id}:resend`,
  /** Tracked transfers not final yet (sorted set of finality keys by time tracked, unix ms). */
  finalityOpen: (keys: RedisKeys): string => `${keys.prefix}pay:fin:open`,
  /** Lease of the finality round, so one process of a deployment checks at a time. */
  finalityLock: (keys: RedisKeys): string => `${keys.prefix}pay:fin:lock`,
};
