import { createHash } from 'node:crypto';
import type { RedisChannelStorageClient } from '@x402/evm/batch-settlement/server/redis-storage';
import type { Cluster, Redis } from 'ioredis';

/** Keys one SCAN call asks for (a hint to Redis, not a limit). */
const DEFAULT_SCAN_COUNT = 100;

/**
 * Adapts one of our ioredis connections (`connectRedis` of @acg/redis: a standalone `Redis` or a
 * `Cluster`) to the client `RedisChannelStorage` of `@x402/evm` expects (node-redis shaped):
 *
 * - `get`, `del`: the same commands; on a Cluster ioredis routes them by key.
 * - `set(key, value, { NX, PX })`: `SET key value [PX ms] [NX]`; answers `'OK'` or `null` (NX lost).
 * - `eval(script, { keys, arguments })`: `EVALSHA` of the script's SHA-1, and `EVAL` once per node
 *   that answers `NOSCRIPT` (so the script text is not sent with every update). The storage's one script
 *   names one key (the channel's), so on a Cluster it runs on the node owning that key's slot.
 * - `scanIterator({ MATCH, COUNT })`: `SCAN` to the end; on a Cluster, on **every master** in turn
 *   (a SCAN sent to a Cluster client reaches one node only, and channel keys without a common hash tag
 *   are spread over all of them). Yields each batch of keys as an array.
 *
 * Errors are ioredis's (e.g. `isRedisUnavailable` of @acg/redis recognizes an outage). See
 * packages/channels README "Storage".
 */
export function ioredisChannelStorageClient(redis: Redis): RedisChannelStorageClient {
  const shas = new Map<string, string>();
  const shaOf = (script: string) => {
    let sha = shas.get(script);
    if (!sha) {
      sha = createHash('sha1').update(script).digest('hex');
      shas.set(script, sha);
    }
    return sha;
  };
  return {
    get: (key) => redis.get(key),
    async set(key, value, options) {
      const extra: (string | number)[] = [];
      if (options?.PX !== undefined) extra.push('PX', options.PX);
      if (options?.NX) extra.push('NX');
      return (await redis.call('SET', key, value, ...extra)) as string | null;
    },
    del: (key) => redis.del(key),
    async eval(script, { keys, arguments: args }) {
      try {
        return await redis.evalsha(shaOf(script), keys.length, ...keys, ...args);
      } catch (e) {
        if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
        return redis.eval(script, keys.length, ...keys, ...args);
      }
    },
    scanIterator(options) {
      const nodes: Redis[] = redis.isCluster ? (redis as unknown as Cluster).nodes('master') : [redis];
      return scanNodes(nodes, options.MATCH ?? '*', options.COUNT ?? DEFAULT_SCAN_COUNT);
    },
  };
}

/** Every key matching `match` on each of `nodes`, one SCAN reply's keys at a time. */
async function* scanNodes(nodes: readonly Redis[], match: string, count: number): AsyncGenerator<string[]> {
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', count);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== '0');
  }
}
