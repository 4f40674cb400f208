import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of the builder RPC rate limit. Each takes the deployment's {@link RedisKeys} (its prefix,
 * `acg:` or `{acg}:` on a Redis Cluster) first, so every key of a deployment shares its prefix.
 */
export const rateLimitKeys = {
  /** A token bucket of `scope` (e.g. `builder:rpc`) for one client id (e.g. an IP); hash {tokens, ts_us}. */
  rateLimit: (keys: RedisKeys, scope: string, id: string): string => `${keys.prefix}rl:${scope}:${id}`,
};
