import type { RedisKeys } from '@acg/redis';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import { RedisChannelStorage } from '@x402/evm/batch-settlement/server/redis-storage';
import type { Redis } from 'ioredis';
import { channelKeys } from './commands/keys.js';
import { ioredisChannelStorageClient } from './redisClient.js';

/** Options of {@link createChannelStorage}. */
export interface ChannelStorageOptions {
  /** The deployment's connection (`connectRedis`; a `Cluster` when REDIS_CLUSTER_NODES is set). */
  redis: Redis;
  /** The deployment's key names (REDIS_KEY_PREFIX); channels live under `channelKeys.storagePrefix`. */
  keys: RedisKeys;
  /** Wait before retrying an update that lost a race with another gateway, ms (default 5). */
  retryIntervalMs?: number;
}

/**
 * The `ChannelStorage` of the x402 `batch-settlement` server (`BatchSettlementEvmScheme` of
 * `@x402/evm/batch-settlement/server`) in Redis: the official `RedisChannelStorage`, unchanged, over our
 * ioredis connection ({@link ioredisChannelStorageClient}).
 *
 * Each channel is one JSON string key (`<prefix>ch:server:channel:<channelId>`; amounts are integer
 * strings, token base units). `updateChannel` is a compare-and-set: it reads the key, runs the callback,
 * and writes with a one-key Lua script only if the key still holds what it read, else retries, so
 * concurrent updates from any number of gateways and workers never lose one. One key per script keeps it
 * legal on a Redis Cluster whatever the prefix's hash tag; `list()` scans every master. See
 * packages/channels README "Storage" and docs/decisions.md "batch-settlement channels".
 */
export function createChannelStorage(o: ChannelStorageOptions): ChannelStorage {
  return new RedisChannelStorage({
    client: ioredisChannelStorageClient(o.redis),
    keyPrefix: channelKeys.storagePrefix(o.keys),
    lockRetryIntervalMs: o.retryIntervalMs ?? 5,
  });
}
