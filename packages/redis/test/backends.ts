import { resolveRedis, startRedisCluster } from '@acg/devnet';
import type { Redis } from 'ioredis';
import { connectRedis } from '../src/index.js';

/** Where a script test runs: a private `redis-server`, or a private 3-master Redis Cluster (README "Operating"). */
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
