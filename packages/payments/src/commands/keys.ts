import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of x402 payments (authorization reservations, idempotency bindings, payment identifiers; the treasury's are `treasuryKeys` of @acg/treasury). Each takes the deployment's {@link RedisKeys} (its prefix,
 * `acg:` or `{acg}:` on a Redis Cluster) first, so every key of a deployment shares its prefix.
 */
export const paymentKeys = {
  /** An x402 authorization reservation: network, asset, payer, EIP-3009 nonce (all lowercase). */
  authorization: (keys: RedisKeys, network: string, asset: string, from: string, nonce: string): string =>
    `${keys.prefix}pay:auth:${network}:${asset.toLowerCase()}:${from.toLowerCase()}:${nonce.toLowerCase()}`,
  /** Authorizations reserved but not completed (sorted set by last progress, unix ms): the crash-recovery sweep reads it. */
  authorizationsInFlight: (keys: RedisKeys): string => `${keys.prefix}pay:inflight`,
  /** The lock one gateway of a deployment takes for a round of the deferred (`upto`) settlement recovery. */
  deferredRecoveryLock: (keys: RedisKeys): string => `${keys.prefix}pay:deferred-recovery-lock`,
  /** The lock of one reservation's deferred settlement (`Paywall.settleRecorded`): one gateway settles it at a time. */
  deferredSettleLock: (authKey: string): string => `${authKey}:settle-lock`,
  /**
   * The pub/sub channel on which the owner of an operation settled when it ends (the worker, for a
   * job paid with `upto`) tells the gateways that a reservation recorded what to settle (message:
   * the reservation key); a gateway then settles it at once (`Paywall.settleRecorded`).
   */
  deferredSettlements: (keys: RedisKeys): string => `${keys.prefix}pay:deferred-settlements`,
  /** A client's Idempotency-Key, scoped by route. */
  idempotency: (keys: RedisKeys, route: string, key: string): string => `${keys.prefix}idem:${route}:${key}`,
  /**
   * A client's x402 `payment-identifier` id (16-128 of `[A-Za-z0-9_-]`), bound to the payload it
   * first paid with (hash: `request_hash` = payload hash, `authorization_key`). Global, not per
   * route: the id names one payment wherever it is sent (REST or MCP).
   */
  paymentIdentifier: (keys: RedisKeys, id: string): string => `${keys.prefix}payid:${id}`,
};
