import { resolveRedis, startRedisCluster } from '@acg/devnet';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

/** Where a channel test runs: a private `redis-server`, or a private 3-master Redis Cluster (docs/operating.md). */
export type TestBackend = 'redis' | 'cluster';

/**
 * For the enclosing `describe`: starts `backend` before its tests (two connections, as two gateways
 * have) and stops it after them. `keys` is a prefix of this run, hash-tagged on a cluster as
 * REDIS_KEY_PREFIX must be there.
 */
export function useBackend(backend: TestBackend, name: string): { readonly a: Redis; readonly b: Redis; readonly keys: RedisKeys } {
  let conns: Redis[] = [];
  let stop: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    if (backend === 'cluster') {
      const cluster = await startRedisCluster();
      conns = [0, 1].map((i) => connectRedis({ url: cluster.url, clusterNodes: cluster.nodes, name: `channels-test-${i}` }));
      stop = cluster.stop;
    } else {
      const handle = await resolveRedis({ preferPrivate: true });
      conns = [0, 1].map((i) => connectRedis({ url: handle.url, name: `channels-test-${i}` }));
      stop = handle.stop;
    }
  });
  afterAll(async () => {
    for (const c of conns) c.disconnect();
    await stop();
  });
  const id = `acg:test:${name}:${process.pid}:${Date.now()}`;
  const started = (i: number) => {
    const c = conns[i];
    if (!c) throw new Error(`the ${backend} backend is not started yet (it starts in beforeAll)`);
    return c;
  };
  return {
    keys: new RedisKeys(backend === 'cluster' ? `{${id}}:` : `${id}:`),
    get a() {
      return started(0);
    },
    get b() {
      return started(1);
    },
  };
}
