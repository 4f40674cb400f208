import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of the liquidation index. Each takes the deployment's {@link RedisKeys} (its prefix,
 * `acg:` or `{acg}:` on a Redis Cluster) first, so every key of a deployment shares its prefix.
 */
export const liquidationKeys = {
  /**
   * A key of the liquidation index of `chain` (hash, set or sorted set named by `part`, e.g.
   * `meta`, `pos`, `hf`, `opp:aave_v3`). The `{chain}` hash tag keeps one chain's index in one
   * Redis Cluster slot, so the `liquidation_search` script may read all of it atomically.
   */
  liquidationIndex: (keys: RedisKeys, chain: string, part: string): string => `${keys.prefix}liq:{${chain}}:${part}`,
};
