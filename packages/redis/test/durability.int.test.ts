import { resolveRedis, startRedisCluster, type RedisHandle, type RedisPersistence } from '@acg/devnet';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, rateLimitIncrScript, readStoreDurability, ReplicaAcks, setUnlogged } from '../src/index.js';

// docs/durability.md: the start check reads the store's AOF setting; WAIT after the money writes on a replicated setup
const handles: RedisHandle[] = [];
const clients: Redis[] = [];
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(handles.map((h) => h.stop()));
});

async function privateRedis(opts: { persistence?: RedisPersistence; replicaOf?: string } = {}): Promise<{ handle: RedisHandle; redis: Redis }> {
  const handle = await resolveRedis({ preferPrivate: true, ...opts });
  handles.push(handle);
  const redis = connectRedis({ url: handle.url });
  clients.push(redis);
  return { handle, redis };
}

describe('readStoreDurability', () => {
  it.each([
    ['always', 'durable', 'appendonly yes, appendfsync always'],
    ['everysec', 'lossy', 'appendonly yes, appendfsync everysec'],
    ['none', 'lossy', 'appendonly no'],
  ] as const)('a private Redis with persistence %s is %s (%s)', async (persistence, verdict, setting) => {
    const { redis } = await privateRedis({ persistence });
    expect(await readStoreDurability(redis)).toMatchObject({ verdict, setting });
  });

  it('is unknown when CONFIG is not allowed (an ACL user without +config), and never writes the setting', async () => {
    const { handle, redis } = await privateRedis({ persistence: 'everysec' });
    await redis.call('ACL', 'SETUSER', 'app', 'on', '>app-password', '~*', '+@all', '-config');
    const url = new URL(handle.url);
    const app = new Redis({ host: url.hostname, port: Number(url.port), username: 'app', password: 'app-password', maxRetriesPerRequest: 0 });
    clients.push(app);
    const d = await readStoreDurability(app);
    expect(d.verdict).toBe('unknown');
    expect(d.setting).toMatch(/^CONFIG GET refused \(NOPERM/);
    expect(await redis.config('GET', 'appendfsync')).toEqual(['appendfsync', 'everysec']);
  });

  it('reads every master of a Redis Cluster; WAIT runs there too', async () => {
    const cluster = await startRedisCluster();
    const redis = connectRedis({ url: cluster.url, clusterNodes: cluster.nodes });
    try {
      const d = await readStoreDurability(redis);
      expect(d.verdict).toBe('durable');
      for (const node of cluster.nodes) expect(d.setting).toContain(`${node}: appendonly yes, appendfsync always`);
      // the barrier and its keyless WAIT go to the master of the prefix's slot together (no replicas here: 0 after the timeout)
      expect(await new ReplicaAcks(redis, '{acg:test}:durability:barrier', 1, 100).wait()).toBe(0);
    } finally {
      redis.disconnect();
      await cluster.stop();
    }
  });
});

describe('ReplicaAcks', () => {
  it('counts the replica that acknowledged the writes before the call; without a replica it waits out the timeout and says 0', async () => {
    const { handle, redis } = await privateRedis();
    const own = (c: Redis) => {
      clients.push(c);
      return c;
    };
    const alone = new ReplicaAcks(own(redis.duplicate()), 'acg:test:barrier', 1, 200);
    await redis.set('acg:test:money', '1');
    expect(await alone.wait()).toBe(0);

    const replica = await privateRedis({ replicaOf: new URL(handle.url).host });
    for (let i = 0; i < 100 && !/master_link_status:up/.test(await replica.redis.info('replication')); i++) await new Promise((r) => setTimeout(r, 100));
    const acks = new ReplicaAcks(own(redis.duplicate()), 'acg:test:barrier', 1, 2_000);
    await redis.set('acg:test:money', '2');
    // concurrent callers share rounds; each is answered once its writes reached the replica
    expect(await Promise.all([acks.wait(), acks.wait(), acks.wait()])).toEqual([1, 1, 1]);
    expect(await replica.redis.get('acg:test:money')).toBe('2');
  });
});

// docs/durability.md "What is not fsynced": the rate limit's counter stays out of the AOF
describe('rate_limit_incr and set_unlogged', () => {
  const aofSize = async (redis: Redis) => Number(/aof_current_size:(\d+)/.exec(await redis.info('persistence'))?.[1]);

  it('counts in a window that expires, and writes nothing to the AOF (a SET does)', async () => {
    const { redis } = await privateRedis({ persistence: 'always' });
    await redis.set('warm', '1');
    const before = await aofSize(redis);
    const counts = [];
    // rate-limiter-flexible's contract: KEYS[1], ARGV[1] points, ARGV[2] seconds -> [consumed, ms to expiry]
    for (let i = 0; i < 3; i++) counts.push((await redis.eval(rateLimitIncrScript(), 1, 'rl:test:1', 1, 1)) as [number, number]);
    expect(counts.map(([consumed]) => consumed)).toEqual([1, 2, 3]);
    for (const [, msLeft] of counts) expect(msLeft).toBeGreaterThan(0);
    for (const [, msLeft] of counts) expect(msLeft).toBeLessThanOrEqual(1_000);
    expect(await redis.get('rl:test:1')).toBe('3');
    expect(await aofSize(redis)).toBe(before);
    await redis.set('written', '1');
    expect(await aofSize(redis)).toBeGreaterThan(before);
  });

  it('set_unlogged sets the key with its time to live, and writes nothing to the AOF', async () => {
    const { redis } = await privateRedis({ persistence: 'always' });
    await redis.set('warm', '1');
    const before = await aofSize(redis);
    await setUnlogged(redis, { key: 'siwx:test', value: 'https://gw.example/api/v1/execute', ttlMs: 60_000 });
    expect(await redis.get('siwx:test')).toBe('https://gw.example/api/v1/execute');
    expect(await redis.pttl('siwx:test')).toBeGreaterThan(50_000);
    expect(await aofSize(redis)).toBe(before);
  });
});
