import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of batch-settlement channels (packages/channels README). Each takes the deployment's
 * {@link RedisKeys} first (its prefix, `acg:` or `{acg}:` on a Redis Cluster), so every key of a
 * deployment shares its prefix.
 */
export const channelKeys = {
  /**
   * The `keyPrefix` given to `RedisChannelStorage` of `@x402/evm`: it stores each channel as one JSON
   * string at `<this>:server:channel:<channelId>` (lower-case `bytes32` hex).
   */
  storagePrefix: (keys: RedisKeys): string => `${keys.prefix}ch`,
  /** The channel manager's lease (string: holder id, with a TTL): one worker claims, settles and refunds at a time. */
  managerLease: (keys: RedisKeys): string => `${keys.prefix}ch:manager:lease`,
  /**
   * Provider credits waiting for a channel's claim (sorted set: JSON credit → the channel's cumulative charged
   * amount after that call, base units). `channelId` lower-case `bytes32`.
   */
  credits: (keys: RedisKeys, channelId: string): string => `${keys.prefix}ch:credits:${channelId.toLowerCase()}`,
  /** Channels with credits waiting (set of channel ids). */
  creditChannels: (keys: RedisKeys): string => `${keys.prefix}ch:credits-due`,
  /** The manager's last pass (hash: `claimed_ms`, `settled_ms`, `refunded_ms`, unix ms). */
  managerState: (keys: RedisKeys): string => `${keys.prefix}ch:manager:state`,
  /** Channels marked unpaid, their deposit reorged out for good (hash: channel id → JSON `UnpaidChannel`, `markChannelUnpaid`). */
  unpaid: (keys: RedisKeys): string => `${keys.prefix}ch:unpaid`,
  /** Channels claimed recently (hash: channel id → `<unix ms of the claim>:<claimed total>`): their on-chain claim and the claimed total are compared with the chain until final. */
  recentClaims: (keys: RedisKeys): string => `${keys.prefix}ch:claims:recent`,
};
