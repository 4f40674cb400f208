import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of the wallet monitor. Each takes the deployment's {@link RedisKeys} (its prefix,
 * `acg:` or `{acg}:` on a Redis Cluster) first, so every key of a deployment shares its prefix.
 */
export const walletMonitorKeys = {
  /**
   * Keys of the wallet monitor (`packages/wallet-monitor`): `wm:<part>:<part>...`, e.g.
   * `wm:sub:<id>` (subscription hash), `wm:idx:<chain>:<address>` (set of subscription ids),
   * `wm:cursor:<chain>` (last processed block and hash). Addresses are lowercased by the caller.
   */
  walletMonitor: (keys: RedisKeys, ...parts: (string | number)[]): string => `${keys.prefix}wm:${parts.join(':')}`,
};
