import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { pingRedis, resolveRedis, startRedisCluster, type RedisHandle } from '../src/redis.js';

const handles: RedisHandle[] = [];
afterAll(async () => {
  await Promise.all(handles.map((h) => h.stop()));
});

function portOf(url: string): number {
  return Number(new URL(url).port);
}

describe('resolveRedis', () => {
  it('with preferPrivate spawns a private redis-server that works, and stop() ends it', async () => {
    const logs: string[] = [];
    const handle = await resolveRedis({ preferPrivate: true, log: (m) => logs.push(m) });
    handles.push(handle);
    expect(handle.spawned).toBe(true);
    expect(handle.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(portOf(handle.url)).not.toBe(6379);
    expect(logs.join('\n')).toMatch(/spawned private redis-server/);

    const client = new Redis(handle.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      await client.set('devnet:test', 'ok');
      expect(await client.get('devnet:test')).toBe('ok');
      expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
      // every acknowledged write is on disk (docs/durability.md), in a dir of its own
      expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
      expect(await client.config('GET', 'appendfsync')).toEqual(['appendfsync', 'always']);
      expect(await client.config('GET', 'save')).toEqual(['save', '']);
      expect((await client.config('GET', 'dir'))[1]).toMatch(/acg-redis-/);
      expect(await client.config('GET', 'bind')).toEqual(['bind', '127.0.0.1']);
    } finally {
      client.disconnect();
    }

    await handle.stop();
    expect(await pingRedis('127.0.0.1', portOf(handle.url), 500)).toBe(false);
    await handle.stop(); // idempotent
  });

  it.each([
    ['everysec', 'yes', 'everysec'],
    ['none', 'no', undefined],
  ] as const)('spawns a server with persistence %s when asked (appendonly %s)', async (persistence, appendonly, appendfsync) => {
    const handle = await resolveRedis({ preferPrivate: true, persistence });
    handles.push(handle);
    const client = new Redis(handle.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', appendonly]);
      if (appendfsync) expect(await client.config('GET', 'appendfsync')).toEqual(['appendfsync', appendfsync]);
    } finally {
      client.disconnect();
      await handle.stop();
    }
  });

  it('spawns a private replica of another private server (replicaOf)', async () => {
    const primary = await resolveRedis({ preferPrivate: true });
    handles.push(primary);
    const replica = await resolveRedis({ preferPrivate: true, replicaOf: new URL(primary.url).host });
    handles.push(replica);
    const client = new Redis(replica.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      expect(await client.info('replication')).toMatch(/role:slave/);
      expect(await client.config('GET', 'replicaof')).toEqual(['replicaof', `127.0.0.1 ${new URL(primary.url).port}`]);
    } finally {
      client.disconnect();
      await replica.stop();
      await primary.stop();
    }
  });

  it('gives two callers two separate private servers', async () => {
    const [a, b] = await Promise.all([resolveRedis({ preferPrivate: true }), resolveRedis({ preferPrivate: true })]);
    handles.push(a, b);
    expect(a.url).not.toBe(b.url);
    expect(await pingRedis('127.0.0.1', portOf(a.url), 500)).toBe(true);
    expect(await pingRedis('127.0.0.1', portOf(b.url), 500)).toBe(true);
    await a.stop();
    expect(await pingRedis('127.0.0.1', portOf(b.url), 500)).toBe(true);
    await b.stop();
  });

  it('uses an explicit url as is, and its stop() leaves that Redis running', async () => {
    const owned = await resolveRedis({ preferPrivate: true });
    handles.push(owned);
    const borrowed = await resolveRedis({ url: owned.url, preferPrivate: true });
    expect(borrowed).toMatchObject({ url: owned.url, spawned: false });
    await borrowed.stop();
    expect(await pingRedis('127.0.0.1', portOf(owned.url), 500)).toBe(true);
    await owned.stop();
  });

  it('without preferPrivate uses 127.0.0.1:6379 when it answers, else spawns (never touches its data)', async () => {
    if (process.env.REDIS_URL) {
      const handle = await resolveRedis();
      expect(handle).toMatchObject({ url: process.env.REDIS_URL, spawned: false });
      return;
    }
    const sharedUp = await pingRedis('127.0.0.1', 6379, 300);
    const handle = await resolveRedis();
    handles.push(handle);
    expect(handle.spawned).toBe(!sharedUp);
    if (sharedUp) expect(handle.url).toBe('redis://127.0.0.1:6379');
    await handle.stop();
    if (sharedUp) expect(await pingRedis('127.0.0.1', 6379, 300)).toBe(true); // stop() left it alone
  });

  it('pingRedis says false for a port where nothing listens', async () => {
    expect(await pingRedis('127.0.0.1', 1, 300)).toBe(false);
  });
});

describe('startRedisCluster', () => {
  it('starts 3 masters owning all slots, each in cluster_state ok; stop() ends every node (idempotent)', async () => {
    const cluster = await startRedisCluster();
    const ports = cluster.nodes.map((n) => Number(n.split(':')[1]));
    try {
      expect(cluster.nodes).toHaveLength(3);
      expect(cluster.url).toBe(`redis://${cluster.nodes[0]}`);
      for (const port of ports) {
        const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 });
        try {
          await client.connect();
          const info = (await client.cluster('INFO')) as string;
          expect(info).toMatch(/cluster_state:ok/);
          expect(info).toMatch(/cluster_known_nodes:3/);
          expect(info).toMatch(/cluster_slots_assigned:16384/);
          expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
          expect(await client.config('GET', 'appendfsync')).toEqual(['appendfsync', 'always']);
          expect((await client.config('GET', 'dir'))[1]).toMatch(new RegExp(`node-${port}$`));
        } finally {
          client.disconnect();
        }
      }
    } finally {
      await cluster.stop();
    }
    for (const port of ports) expect(await pingRedis('127.0.0.1', port, 500)).toBe(false);
    await cluster.stop();
  });
});
