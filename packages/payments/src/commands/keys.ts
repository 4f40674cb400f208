import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of x402 payments (authorization reservations, idempotency bindings, refunds, the treasury send lock, payment identifiers). Each takes the deployment's {@link RedisKeys} (its prefix,
 * `acg:` or `{acg}:` on a Redis Cluster) first, so every key of a deployment shares its prefix.
 */
export const paymentKeys = {
  /** An x402 authorization reservation: network, asset, payer, EIP-3009 nonce (all lowercase). */
  authorization: (keys: RedisKeys, network: string, asset: string, from: string, nonce: string): string =>
    `${keys.prefix}pay:auth:${network}:${asset.toLowerCase()}:${from.toLowerCase()}:${nonce.toLowerCase()}`,
  /** Authorizations reserved but not completed (sorted set by last progress, unix ms): the crash-recovery sweep reads it. */
  authorizationsInFlight: (keys: RedisKeys): string => `${keys.prefix}pay:inflight`,
  /** A client's Idempotency-Key, scoped by route. */
  idempotency: (keys: RedisKeys, route: string, key: string): string => `${keys.prefix}idem:${route}:${key}`,
  /** Refund records by operation id. */
  refund: (keys: RedisKeys, id: string): string => `${keys.prefix}refund:${id}`,
  /** Lease held around prepare + sign + broadcast of any transaction from a treasury address (refunds and payouts). */
  treasurySendLock: (keys: RedisKeys, address: string): string => `${keys.prefix}treasury-send:${address.toLowerCase()}`,
  /**
   * A client's x402 `payment-identifier` id (16-128 of `[A-Za-z0-9_-]`), bound to the payload it
   * first paid with (hash: `request_hash` = payload hash, `authorization_key`). Global, not per
   * route: the id names one payment wherever it is sent (REST or MCP).
   */
  paymentIdentifier: (keys: RedisKeys, id: string): string => `${keys.prefix}payid:${id}`,
  /** An outgoing transfer tracked until final (`finality.ts`): kind `settlement | refund | payout` and its operation, refund or payout id. */
  finality: (keys: RedisKeys, kind: string, id: string): string => `${keys.prefix}pay:fin:${kind}:${id}`,
  /** The signed treasury resubmission of a settlement's EIP-3009 authorization after a reorg (a `TransferRecord`: `raw_tx`, `tx_hash`, `nonce`). */
  finalityResend: (keys: RedisKeys, id: string): string => `${keys.prefix}pay:fin:settlement:${id}:resend`,
  /** Tracked transfers not final yet (sorted set of finality keys by time tracked, unix ms). */
  finalityOpen: (keys: RedisKeys): string => `${keys.prefix}pay:fin:open`,
  /** Lease of the finality round, so one process of a deployment checks at a time. */
  finalityLock: (keys: RedisKeys): string => `${keys.prefix}pay:fin:lock`,
};
