import { resolveRedis, startRedisCluster } from '@acg/devnet';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { connectRedis, RedisKeys } from '../src/index.js';

/** Where a script test runs: a private `redis-server`, or a private 3-master Redis Cluster (docs/operating.md). */
export type TestBackend = 'redis' | 'cluster';
export const BACKENDS: readonly TestBackend[] = ['redis', 'cluster'];

/** A key prefix unique to this run; hash-tagged on a cluster, as REDIS_KEY_PREFIX must be there. */
export function testPrefix(backend: TestBackend, name: string): string {
  const id = `acg:test:${name}:${process.pid}:${Date.now()}`;
  return backend === 'cluster' ? `{${id}}:` : `${id}:`;
}

/** Starts the backend and connects to it with `connectRedis` (a `Cluster` on the cluster); `stop()` disconnects and stops it. */
export async function startBackend(backend: TestBackend): Promise<{ redis: Redis; stop(): Promise<void> }> {
  if (backend === 'cluster') {
    const cluster = await startRedisCluster();
    const redis = connectRedis({ url: cluster.url, clusterNodes: cluster.nodes });
    return {
      redis,
      async stop() {
        redis.disconnect();
        await cluster.stop();
      },
    };
  }
  const handle = await resolveRedis({ preferPrivate: true });
  const redis = connectRedis({ url: handle.url });
  return {
    redis,
    async stop() {
      redis.disconnect();
      await handle.stop();
    },
  };
}

/**
 * For the enclosing `describe`: starts `backend` before its tests and stops it after them.
 * `redis` is the connection (read it inside a test or hook: it throws before the backend started);
 * `keys` a fresh key prefix named after `name` ({@link testPrefix}).
 */
export function useBackend(backend: TestBackend, name: string): { readonly redis: Redis; readonly keys: RedisKeys } {
  let started: { redis: Redis; stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    started = await startBackend(backend);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return {
    keys: new RedisKeys(testPrefix(backend, name)),
    get redis() {
      if (!started) throw new Error(`the ${backend} backend is not started yet (it starts in beforeAll)`);
      return started.redis;
    },
  };
}
