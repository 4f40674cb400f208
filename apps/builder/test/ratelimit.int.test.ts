import { resolveRedis, type RedisHandle } from '@acg/devnet';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenBucket } from '../src/ratelimit.js';
import { freshIp, post, startTestBuilder, type TestBuilder } from './harness.js';
import { rateLimitKeys } from '../src/commands/keys.js';

/** Redis clock in seconds (float), read with TIME: the bucket's own clock. */
async function redisNow(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) + Number(us) / 1e6;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('token_bucket.lua (the Lua script alone)', () => {
  let handle: RedisHandle;
  let redis: Redis;
  const keys = new RedisKeys(`acg:test:${ulid()}:`);
  beforeAll(async () => {
    handle = await resolveRedis({ preferPrivate: true });
    redis = connectRedis({ url: handle.url });
  });
  afterAll(async () => {
    redis?.disconnect();
    await handle?.stop();
  });

  it('starts full at the burst, refuses below one token with the exact wait, and refills continuously on the Redis clock', async () => {
    const bucket = new TokenBucket(redis, keys, { scope: 'unit', ratePerSecond: 10, burst: 20 });
    const results = [];
    for (let i = 0; i < 25; i++) results.push(await bucket.take('a'));
    // 25 sequential takes span a few ms of Redis time: the refill over that span bounds the extra
    const span = Number(results[24].nowUs - results[0].nowUs) / 1e6;
    const accepted = results.filter((r) => r.allowed).length;
    expect(accepted).toBeGreaterThanOrEqual(20);
    expect(accepted).toBeLessThanOrEqual(20 + Math.floor(10 * span));
    const refused = results.find((r) => !r.allowed)!;
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(100);
    // after waiting for `retryAfterMs` on the Redis clock, the next take succeeds
    const wake = Number(refused.nowUs) / 1e6 + refused.retryAfterMs / 1000;
    while ((await redisNow(redis)) < wake) await sleep(5);
    expect((await bucket.take('a')).allowed).toBe(true);
    // other ids have their own bucket; a cost above the burst never passes
    expect((await bucket.take('b')).tokens).toBe(19);
    expect((await bucket.take('c', 21)).allowed).toBe(false);
    expect(await redis.pttl(rateLimitKeys.rateLimit(keys, 'unit', 'a'))).toBeGreaterThan(0);
  });
});

describe('rate limit on /rpc: 10 requests/s per IP, burst 20 (docs/spec-notes.md 8)', () => {
  let t: TestBuilder;
  beforeAll(async () => {
    t = await startTestBuilder();
  });
  afterAll(async () => {
    await t?.close();
  });
  // Rate limiting runs before anything else, so an unsigned request is enough to spend a token:
  // allowed ones get 200 (with -32600 for the missing signature), limited ones 429.
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendBundle', params: [{ txs: [], blockNumber: '0x1' }] });
  const burst = (ip: string, n: number) => Promise.all(Array.from({ length: n }, () => post(t.builder.rpcUrl, body, {}, ip)));

  it('30 instant requests from one IP: exactly 20 pass, 10 get 429 + Retry-After and -32005; refill and 10/s sustained are measured on the Redis clock', async () => {
    const ip = freshIp();
    const s0 = await redisNow(t.builder.redis);
    const first = await burst(ip, 30);
    const e0 = await redisNow(t.builder.redis);
    const passed = first.filter((r) => r.status === 200).length;
    const limited = first.filter((r) => r.status === 429);
    // the refill during the burst is at most 10 × (its Redis duration); when that is under a token, exactly 20 pass
    expect(passed).toBeGreaterThanOrEqual(20);
    expect(passed).toBeLessThanOrEqual(20 + Math.floor(10 * (e0 - s0)));
    if (e0 - s0 < 0.1) expect(passed).toBe(20);
    expect(passed + limited.length).toBe(30);
    for (const r of limited) {
      expect(r.json.error).toMatchObject({ code: -32005 });
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // another IP is not affected
    expect((await post(t.builder.rpcUrl, body, {}, freshIp())).status).toBe(200);

    // refill: wait until the Redis clock is 1 s past the burst, then fire 30 again
    while ((await redisNow(t.builder.redis)) < e0 + 1) await sleep(20);
    const s1 = await redisNow(t.builder.redis);
    const second = await burst(ip, 30);
    const e1 = await redisNow(t.builder.redis);
    const passed2 = second.filter((r) => r.status === 200).length;
    // at least 10 × (s1 - e0) ≥ 10 tokens came back; at most 1 + 10 × (e1 - s0) in all
    expect(passed2).toBeGreaterThanOrEqual(Math.min(20, Math.floor(10 * (s1 - e0))));
    expect(passed2).toBeLessThanOrEqual(Math.min(20, Math.floor(1 + 10 * (e1 - s0))));
    expect(second.filter((r) => r.status === 429)).toHaveLength(30 - passed2);

    // sustained: the bucket is empty now; one request every ≥ 120 ms of Redis time (above 1 token per
    // 100 ms) is always served, 15 times in a row
    const statuses: number[] = [];
    let last = e1;
    for (let i = 0; i < 15; i++) {
      while ((await redisNow(t.builder.redis)) < last + 0.12) await sleep(10);
      statuses.push((await post(t.builder.rpcUrl, body, {}, ip)).status);
      last = await redisNow(t.builder.redis);
    }
    expect(statuses).toEqual(Array(15).fill(200));
  });

  it('a batch costs one token per call and may not exceed the burst', async () => {
    const ip = freshIp();
    const call = { jsonrpc: '2.0', method: 'eth_cancelBundle', params: [{ replacementUuid: '00000000-0000-4000-8000-000000000000' }] };
    const over = await post(t.builder.rpcUrl, JSON.stringify(Array(21).fill(call)), {}, ip);
    // unsigned: the signature is checked before the batch size, so this is -32600 too, but it spent only one token
    expect(over.json.error.code).toBe(-32600);
    const big = await burst(ip, 19);
    expect(big.every((r) => r.status === 200)).toBe(true);
    expect((await post(t.builder.rpcUrl, body, {}, ip)).status).toBe(429);
  });
});
