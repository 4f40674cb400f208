import { startRedisCluster, type RedisClusterHandle } from '@acg/devnet';
import { redisClusterProblem } from '@acg/env';
import { Queue, QueueEvents, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserveAuthorization } from '@acg/payments/commands';
import { connectRedis, RedisKeys } from '../src/index.js';
import { paymentKeys } from '@acg/payments/commands';

// The Redis Cluster rules of docs/operating.md on a private 3-master cluster: connectRedis makes a
// Cluster, a hash-tagged prefix keeps multi-key scripts and BullMQ in one slot (an untagged one
// cannot), and pub/sub works across nodes.
let cluster: RedisClusterHandle;
let redis: Redis;
let bull: Redis;

beforeAll(async () => {
  cluster = await startRedisCluster();
  redis = connectRedis({ url: cluster.url, clusterNodes: cluster.nodes, name: 'cluster-test' });
  bull = connectRedis({ url: cluster.url, clusterNodes: cluster.nodes, name: 'cluster-test-bull', forBullmq: true });
});
afterAll(async () => {
  redis?.disconnect();
  bull?.disconnect();
  await cluster?.stop();
});

const reserve = (keys: RedisKeys, nonce: string) =>
  reserveAuthorization(redis, {
    authKey: paymentKeys.authorization(keys, 'eip155:8453', '0xA', '0xB', nonce),
    inFlightKey: paymentKeys.authorizationsInFlight(keys),
    requestHash: 'r',
    payloadHash: 'p',
    operationId: 'exe_1',
    nowMs: 1,
    retentionSeconds: 60,
    asset: '0xA',
    from: '0xB',
    nonce,
    amount: '1',
  });

describe('connectRedis with clusterNodes', () => {
  it('is an ioredis Cluster over three masters that own all 16384 slots', async () => {
    expect(redis.isCluster).toBe(true);
    const slots = (await redis.cluster('SLOTS')) as [number, number, ...unknown[]][];
    expect(slots).toHaveLength(3);
    expect(slots.reduce((n, [from, to]) => n + to - from + 1, 0)).toBe(16384);
  });

  it('a multi-key script runs under a hash-tagged prefix; under an untagged one its keys span slots (CROSSSLOT)', async () => {
    const tagged = new RedisKeys(`{acg:test:${Date.now()}}:`);
    expect(await reserve(tagged, '0x01')).toEqual({ reserved: true });
    const untagged = new RedisKeys(`acg:test:${Date.now()}:`);
    await expect(reserve(untagged, '0x01')).rejects.toThrow(/CROSSSLOT/);
  });

  it('pub/sub: a duplicate() subscribed on one node receives what another connection publishes', async () => {
    const subscriber = redis.duplicate();
    const channel = `{acg:test:${Date.now()}}:{prov}:changed`;
    try {
      const got = new Promise<string>((resolve) => subscriber.on('message', (_ch: string, message: string) => resolve(message)));
      await subscriber.subscribe(channel);
      await redis.publish(channel, 'hello');
      expect(await got).toBe('hello');
    } finally {
      subscriber.disconnect();
    }
  });

  it('BullMQ: a queue and a worker under the hash-tagged BullMQ prefix run a job', async () => {
    const prefix = new RedisKeys(`{acg:test:${Date.now()}}:`).bullPrefix();
    const queue = new Queue('cluster-probe', { connection: bull, prefix });
    const events = new QueueEvents('cluster-probe', { connection: bull.duplicate(), prefix, lastEventId: '0-0' });
    const worker = new Worker('cluster-probe', async (job) => ({ doubled: (job.data as { n: number }).n * 2 }), { connection: bull, prefix });
    try {
      await Promise.all([worker.waitUntilReady(), events.waitUntilReady()]);
      const job = await queue.add('double', { n: 21 });
      expect(await job.waitUntilFinished(events, 30_000)).toEqual({ doubled: 42 });
    } finally {
      await worker.close();
      await events.close();
      await queue.close();
    }
  });
});

describe('redisClusterProblem (standalone entries preflight)', () => {
  it('accepts a cluster in state ok; names each node that does not answer', async () => {
    expect(await redisClusterProblem('REDIS_CLUSTER_NODES', cluster.nodes)).toBeUndefined();
    expect(await redisClusterProblem('REDIS_CLUSTER_NODES', ['127.0.0.1:1', cluster.nodes[0]])).toBeUndefined();
    expect(await redisClusterProblem('REDIS_CLUSTER_NODES', ['127.0.0.1:1'], undefined, 1000)).toBe(
      'REDIS_CLUSTER_NODES=127.0.0.1:1: no node reports cluster_state:ok (127.0.0.1:1: cannot connect (ECONNREFUSED))',
    );
  });
});
