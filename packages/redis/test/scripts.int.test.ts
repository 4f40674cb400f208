import { resolveRedis, type RedisHandle } from '@acg/devnet';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, RedisKeys, withScripts, type ScriptedRedis } from '../src/index.js';

let handle: RedisHandle;
let raw: Redis;
let redis: ScriptedRedis;
const keys = new RedisKeys(`acg:test:${process.pid}:${Date.now()}:`);

beforeAll(async () => {
  handle = await resolveRedis({ preferPrivate: true });
  raw = connectRedis({ url: handle.url });
  redis = withScripts(raw);
});
afterAll(async () => {
  raw?.disconnect();
  await handle?.stop();
});

describe('reserve_authorization', () => {
  it('reserves once; a second reservation sees the first holder', async () => {
    const key = keys.authorization('eip155:8453', '0xA', '0xB', '0x01');
    expect(await redis.reserve_authorization(key, keys.authorizationsInFlight(), 'req1', 'pay1', 'exe_1', 1000, 60)).toEqual(['reserved']);
    expect(await redis.reserve_authorization(key, keys.authorizationsInFlight(), 'req2', 'pay2', 'exe_2', 2000, 60)).toEqual(['exists', 'pending', 'req1', 'pay1', 'exe_1', '1000']);
    expect(await raw.ttl(key)).toBeGreaterThan(0);
  });

  it('lets exactly one of many concurrent reservations win', async () => {
    const key = keys.authorization('eip155:8453', '0xA', '0xC', '0x02');
    const results = (await Promise.all(Array.from({ length: 20 }, (_, i) => redis.reserve_authorization(key, keys.authorizationsInFlight(), 'r', 'p', `exe_${i}`, i, 60)))) as string[][];
    expect(results.filter((r) => r[0] === 'reserved')).toHaveLength(1);
  });
});

describe('transition_authorization', () => {
  it('moves state only for the holder and from an expected state', async () => {
    const key = keys.authorization('eip155:8453', '0xA', '0xD', '0x03');
    await redis.reserve_authorization(key, keys.authorizationsInFlight(), 'r', 'p', 'exe_1', 1, 60);
    expect(await redis.transition_authorization(key, keys.authorizationsInFlight(), 'exe_other', 'pending', 'settled', 2)).toBe(0);
    expect(await redis.transition_authorization(key, keys.authorizationsInFlight(), 'exe_1', 'settled', 'completed', 2)).toBe(0);
    expect(await redis.transition_authorization(key, keys.authorizationsInFlight(), 'exe_1', 'pending,settle_unknown', 'settled', 3, 'tx_hash', '0xabc')).toBe(1);
    expect(await raw.hmget(key, 'state', 'tx_hash', 'updated_at')).toEqual(['settled', '0xabc', '3']);
    expect(await raw.zscore(keys.authorizationsInFlight(), key)).toBe('3');
    expect(await redis.transition_authorization(key, keys.authorizationsInFlight(), 'exe_1', 'settled', 'completed', 4)).toBe(1);
    expect(await raw.zscore(keys.authorizationsInFlight(), key)).toBeNull();
  });

  it('releases (deletes) a reservation when asked by its holder', async () => {
    const key = keys.authorization('eip155:8453', '0xA', '0xE', '0x04');
    await redis.reserve_authorization(key, keys.authorizationsInFlight(), 'r', 'p', 'exe_1', 1, 60);
    expect(await redis.transition_authorization(key, keys.authorizationsInFlight(), 'exe_1', 'pending', '__delete__', 2)).toBe(1);
    expect(await raw.exists(key)).toBe(0);
    expect(await raw.zscore(keys.authorizationsInFlight(), key)).toBeNull();
    expect(await redis.transition_authorization(key, keys.authorizationsInFlight(), 'exe_1', 'pending', 'settled', 3)).toBe(0);
  });
});

describe('claim_idempotency_key', () => {
  it('binds a key to the first request only', async () => {
    const key = keys.idempotency('execute', 'k1');
    expect(await redis.claim_idempotency_key(key, 'h1', 'auth1', 60)).toEqual(['claimed']);
    expect(await redis.claim_idempotency_key(key, 'h2', 'auth2', 60)).toEqual(['exists', 'h1', 'auth1']);
  });
});
