import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of the bundle builder (orderflow pool, stats, receipts). Each takes the deployment's {@link RedisKeys} (its prefix,
 * `acg:` or `{acg}:` on a Redis Cluster) first, so every key of a deployment shares its prefix.
 */
export const bundleKeys = {
  /** Keys of the bundle builder (`apps/builder`): `builder:<part>:<part>...`, e.g. `builder:pool:<block>`. */
  builder: (keys: RedisKeys, ...parts: (string | number)[]): string => `${keys.prefix}builder:${parts.join(':')}`,
};
