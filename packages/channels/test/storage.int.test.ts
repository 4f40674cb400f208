// The channel storage of the x402 batch-settlement server (the official RedisChannelStorage over our
// ioredis adapter) on a real private Redis and a real private 3-master Redis Cluster: concurrent updates
// from two connections (two gateways) never lose one, deletes, list() across every master.
import { RedisKeys } from '@acg/redis';
import type { Channel } from '@x402/evm/batch-settlement/server';
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { channelKeys, createChannelStorage, ioredisChannelStorageClient } from '../src/index.js';
import { useBackend, type TestBackend } from './backends.js';

const ZERO = '0x0000000000000000000000000000000000000000';
let seq = 1;
/** A channel record as the batch-settlement server stores it (amounts: integer strings, base units). */
function channel(over: Partial<Channel> = {}): Channel {
  const channelId = `0x${(seq++).toString(16).padStart(64, '0')}`;
  return {
    channelId,
    channelConfig: {
      payer: '0x00000000000000000000000000000000000000a1',
      payerAuthorizer: '0x00000000000000000000000000000000000000a1',
      receiver: '0x00000000000000000000000000000000000000b2',
      receiverAuthorizer: '0x00000000000000000000000000000000000000c3',
      token: ZERO,
      withdrawDelay: 900,
      salt: channelId as `0x${string}`,
    },
    chargedCumulativeAmount: '0',
    signedMaxClaimable: '0',
    signature: '0x',
    balance: '1000000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 0,
    ...over,
  };
}
const add = (c: Channel | undefined, n: bigint): Channel | undefined =>
  c && { ...c, chargedCumulativeAmount: (BigInt(c.chargedCumulativeAmount) + n).toString(), lastRequestTimestamp: Date.now() };

for (const backend of ['redis', 'cluster'] as TestBackend[]) {
  describe(`channel storage on ${backend === 'cluster' ? 'a 3-master Redis Cluster' : 'a private Redis'}`, () => {
    const env = useBackend(backend, 'channels');

    it('stores a channel under the deployment prefix; get, unchanged and delete answer as the interface says', async () => {
      const s = createChannelStorage({ redis: env.a, keys: env.keys });
      const c = channel();
      expect(await s.get(c.channelId)).toBeUndefined();
      expect(await s.updateChannel(c.channelId, () => c)).toEqual({ channel: c, status: 'updated' });
      expect(await env.a.get(`${channelKeys.storagePrefix(env.keys)}:server:channel:${c.channelId}`)).toBe(JSON.stringify(c));
      // the other connection (another gateway) reads the same record, by a checksum-case id too
      expect(await createChannelStorage({ redis: env.b, keys: env.keys }).get(c.channelId.toUpperCase().replace('0X', '0x'))).toEqual(c);
      expect(await s.updateChannel(c.channelId, (cur) => cur)).toEqual({ channel: c, status: 'unchanged' });
      expect(await s.updateChannel(c.channelId, () => undefined)).toEqual({ channel: undefined, status: 'deleted' });
      expect(await s.get(c.channelId)).toBeUndefined();
    });

    it('concurrent updateChannel from two connections never loses an update (200 increments, 2 x 100 at once)', async () => {
      const s1 = createChannelStorage({ redis: env.a, keys: env.keys });
      const s2 = createChannelStorage({ redis: env.b, keys: env.keys });
      const c = channel();
      await s1.updateChannel(c.channelId, () => c);
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? s1 : s2).updateChannel(c.channelId, (cur) => add(cur, 7n))));
      expect(results.every((r) => r.status === 'updated')).toBe(true);
      // each callback saw a distinct value: no two updates were built on the same read
      expect(new Set(results.map((r) => r.channel?.chargedCumulativeAmount)).size).toBe(200);
      expect((await s2.get(c.channelId))?.chargedCumulativeAmount).toBe('1400');
    });

    it('a create race: two connections creating the same channel at once, one wins and the other sees it', async () => {
      const s1 = createChannelStorage({ redis: env.a, keys: env.keys });
      const s2 = createChannelStorage({ redis: env.b, keys: env.keys });
      const c = channel();
      const make = (s: typeof s1) => s.updateChannel(c.channelId, (cur) => (cur ? add(cur, 1n) : c));
      await Promise.all([make(s1), make(s2), make(s1), make(s2)]);
      expect((await s1.get(c.channelId))?.chargedCumulativeAmount).toBe('3');
    });

    it('list() finds every channel of the prefix, sorted by id, and none of another prefix', async () => {
      const keys = new RedisKeys(`${env.keys.prefix}list:`);
      const s = createChannelStorage({ redis: env.a, keys });
      const made = Array.from({ length: 25 }, () => channel());
      for (const c of made) await s.updateChannel(c.channelId, () => c);
      await createChannelStorage({ redis: env.a, keys: new RedisKeys(`${env.keys.prefix}other:`) }).updateChannel(channel().channelId, () => channel());
      const listed = await createChannelStorage({ redis: env.b, keys }).list();
      expect(listed.map((c) => c.channelId)).toEqual(made.map((c) => c.channelId).sort());
    });

    it('the adapter: SET with NX and PX, DEL, and EVAL of a script not yet cached (NOSCRIPT then EVAL)', async () => {
      const client = ioredisChannelStorageClient(env.a);
      const key = `${env.keys.prefix}adapter`;
      expect(await client.set(key, 'a', { NX: true, PX: 60_000 })).toBe('OK');
      expect(await client.set(key, 'b', { NX: true, PX: 60_000 })).toBeNull();
      expect(await client.get(key)).toBe('a');
      expect(await env.a.pttl(key)).toBeGreaterThan(0);
      const script = `return {redis.call("GET", KEYS[1]), ARGV[1], "${Date.now()}"}`;
      expect(await client.eval(script, { keys: [key], arguments: ['x'] })).toEqual(['a', 'x', expect.any(String)]);
      expect(await client.eval(script, { keys: [key], arguments: ['y'] })).toEqual(['a', 'y', expect.any(String)]);
      expect(await client.del(key)).toBe(1);
    });
  });
}

describe('channel storage on a Redis Cluster without a common hash tag', () => {
  const env = useBackend('cluster', 'channels-spread');

  it('each channel is one key, so updates stay single-slot; list() scans every master and finds channels on all three', async () => {
    // an untagged prefix spreads the channels over all masters (the deployment's `{acg}:` keeps them in one slot)
    const keys = new RedisKeys(`acg:test:spread:${process.pid}:${Date.now()}:`);
    const s = createChannelStorage({ redis: env.a, keys });
    const made = Array.from({ length: 30 }, () => channel());
    await Promise.all(made.map((c) => s.updateChannel(c.channelId, () => c)));
    await Promise.all(made.map((c) => s.updateChannel(c.channelId, (cur) => add(cur, 5n))));
    const masters = (env.a as unknown as Cluster).nodes('master');
    expect(masters).toHaveLength(3);
    const perMaster = await Promise.all(masters.map(async (m) => (await m.keys(`${channelKeys.storagePrefix(keys)}:*`)).length));
    expect(perMaster.every((n) => n > 0)).toBe(true);
    expect(perMaster.reduce((a, b) => a + b, 0)).toBe(30);
    const listed = await createChannelStorage({ redis: env.b, keys }).list();
    expect(listed).toHaveLength(30);
    expect(listed.every((c) => c.chargedCumulativeAmount === '5')).toBe(true);
    for (const c of made) await s.updateChannel(c.channelId, () => undefined);
    expect(await s.list()).toEqual([]);
  });
});
