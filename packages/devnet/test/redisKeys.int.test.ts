import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeysWithPrefix, literalGlob, resolveRedis, startRedisCluster, type RedisHandle } from '../src/index.js';

let handle: RedisHandle;
let redis: Redis;
beforeAll(async () => {
  handle = await resolveRedis({ preferPrivate: true });
  redis = new Redis(handle.url);
});
afterAll(async () => {
  redis?.disconnect();
  await handle?.stop();
});

describe('deleteKeysWithPrefix (npm start cleans its own per-run prefix)', () => {
  it('removes every key under the prefix, in batches, and nothing else', async () => {
    const mine = 'acg:dev:01TESTRUN:';
    const pipeline = redis.pipeline();
    for (let i = 0; i < 2500; i++) pipeline.set(`${mine}k${i}`, '1');
    pipeline.hset(`${mine}bull:jobs:meta`, 'a', '1');
    pipeline.set('acg:dev:01OTHERRUN:k', 'keep');
    pipeline.set('acg:dev:01TESTRUNX', 'keep'); // shares the text but not the prefix's final ':'
    await pipeline.exec();
    expect(await deleteKeysWithPrefix(handle.url, mine)).toBe(2501);
    expect(await redis.keys(`${mine}*`)).toEqual([]);
    expect(await redis.get('acg:dev:01OTHERRUN:k')).toBe('keep');
    expect(await redis.get('acg:dev:01TESTRUNX')).toBe('keep');
  });

  it('matches the prefix literally: glob characters in it match only themselves', async () => {
    await redis.set('a*b:1', 'x');
    await redis.set('axb:1', 'keep');
    expect(literalGlob('a*b:')).toBe('a\\*b:');
    expect(await deleteKeysWithPrefix(handle.url, 'a*b:')).toBe(1);
    expect(await redis.get('axb:1')).toBe('keep');
  });

  it('refuses an empty prefix', async () => {
    await expect(deleteKeysWithPrefix(handle.url, '')).rejects.toThrow(/empty prefix/);
  });
});

describe('deleteKeysWithPrefix on a Redis Cluster (npm start with REDIS_CLUSTER_NODES)', () => {
  it('removes the prefix keys from the master that holds them (hash-tagged) and from every master (untagged), nothing else', async () => {
    const cluster = await startRedisCluster();
    const client = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: Number(n.split(':')[1]) })));
    try {
      const tagged = '{acg:dev:01TESTRUN}:';
      const untagged = 'acg:dev:01SPREAD:';
      for (let i = 0; i < 300; i++) await client.set(`${tagged}k${i}`, '1');
      for (let i = 0; i < 30; i++) await client.set(`${untagged}k${i}`, '1');
      await client.set('{acg:dev:01OTHER}:k', 'keep');
      // the untagged keys spread over the masters, the tagged ones share a slot
      const holders = await Promise.all(client.nodes('master').map(async (m) => (await m.keys(`${untagged}*`)).length));
      expect(holders.filter((n) => n > 0).length).toBeGreaterThan(1);
      expect(await deleteKeysWithPrefix(cluster.url, tagged, { clusterNodes: cluster.nodes })).toBe(300);
      expect(await deleteKeysWithPrefix(cluster.url, untagged, { clusterNodes: cluster.nodes })).toBe(30);
      const left = await Promise.all(client.nodes('master').map((m) => m.keys('*')));
      expect(left.flat()).toEqual(['{acg:dev:01OTHER}:k']);
    } finally {
      client.disconnect();
      await cluster.stop();
    }
  });
});
