import { resolveRedis, type RedisHandle } from '@acg/devnet';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimIdempotencyKey,
  connectRedis,
  readAuthorization,
  RedisKeys,
  releaseAuthorization,
  reserveAuthorization,
  transitionAuthorization,
  type AuthorizationState,
} from '../src/index.js';

let handle: RedisHandle;
let raw: Redis;
const keys = new RedisKeys(`acg:test:${process.pid}:${Date.now()}:`);

beforeAll(async () => {
  handle = await resolveRedis({ preferPrivate: true });
  raw = connectRedis({ url: handle.url });
});
afterAll(async () => {
  raw?.disconnect();
  await handle?.stop();
});

const inFlightKey = keys.authorizationsInFlight();
const reserve = (authKey: string, requestHash: string, payloadHash: string, operationId: string, nowMs: number) =>
  reserveAuthorization(raw, {
    authKey,
    inFlightKey,
    requestHash,
    payloadHash,
    operationId,
    nowMs,
    retentionSeconds: 60,
    asset: '0xA',
    from: '0xB',
    nonce: '0x01',
    amount: '1000',
  });

describe('reserve_authorization', () => {
  it('reserves once; a second reservation sees the first holder', async () => {
    const key = keys.authorization('eip155:8453', '0xA', '0xB', '0x01');
    expect(await reserve(key, 'req1', 'pay1', 'exe_1', 1000)).toEqual({ reserved: true });
    expect(await reserve(key, 'req2', 'pay2', 'exe_2', 2000)).toEqual({
      reserved: false,
      existing: { state: 'pending', requestHash: 'req1', payloadHash: 'pay1', operationId: 'exe_1', updatedAtMs: 1000 },
    });
    expect(await readAuthorization(raw, key)).toEqual({ state: 'pending', requestHash: 'req1', payloadHash: 'pay1', operationId: 'exe_1', updatedAtMs: 1000 });
    expect(await raw.hmget(key, 'asset', 'payer', 'nonce', 'amount')).toEqual(['0xA', '0xB', '0x01', '1000']);
    expect(await raw.ttl(key)).toBeGreaterThan(0);
    expect(await raw.zscore(inFlightKey, key)).toBe('1000');
  });

  it('lets exactly one of many concurrent reservations win', async () => {
    const key = keys.authorization('eip155:8453', '0xA', '0xC', '0x02');
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => reserve(key, 'r', 'p', `exe_${i}`, i)));
    expect(results.filter((r) => r.reserved)).toHaveLength(1);
  });
});

describe('transition_authorization', () => {
  it('moves state only for the holder and from an expected state', async () => {
    const key = keys.authorization('eip155:8453', '0xA', '0xD', '0x03');
    const move = (operationId: string, from: AuthorizationState[], to: AuthorizationState, nowMs: number, fields?: Record<string, string>) =>
      transitionAuthorization(raw, { authKey: key, inFlightKey, operationId, from, to, nowMs, fields });
    await reserve(key, 'r', 'p', 'exe_1', 1);
    expect(await move('exe_other', ['pending'], 'settled', 2)).toBe(false);
    expect(await move('exe_1', ['settled'], 'completed', 2)).toBe(false);
    expect(await move('exe_1', ['pending', 'settle_unknown'], 'settled', 3, { tx_hash: '0xabc' })).toBe(true);
    expect(await raw.hmget(key, 'state', 'tx_hash', 'updated_at')).toEqual(['settled', '0xabc', '3']);
    expect(await raw.zscore(inFlightKey, key)).toBe('3');
    expect(await move('exe_1', ['settled'], 'completed', 4, { response: '{}' })).toBe(true);
    expect(await raw.hmget(key, 'state', 'response')).toEqual(['completed', '{}']);
    expect(await raw.zscore(inFlightKey, key)).toBeNull();
  });
});

describe('release_authorization', () => {
  it('deletes a reservation only for its holder, from an expected state', async () => {
    const key = keys.authorization('eip155:8453', '0xA', '0xE', '0x04');
    const release = (operationId: string, from: ('pending' | 'settle_unknown' | 'settled')[]) =>
      releaseAuthorization(raw, { authKey: key, inFlightKey, operationId, from });
    await reserve(key, 'r', 'p', 'exe_1', 1);
    expect(await release('exe_other', ['pending'])).toBe(false);
    expect(await release('exe_1', ['settle_unknown', 'settled'])).toBe(false);
    expect(await raw.exists(key)).toBe(1);
    expect(await release('exe_1', ['pending', 'settle_unknown'])).toBe(true);
    expect(await raw.exists(key)).toBe(0);
    expect(await raw.zscore(inFlightKey, key)).toBeNull();
    expect(await transitionAuthorization(raw, { authKey: key, inFlightKey, operationId: 'exe_1', from: ['pending'], to: 'settled', nowMs: 3 })).toBe(false);
    expect(await release('exe_1', ['pending'])).toBe(false);
  });
});

describe('claim_idempotency_key', () => {
  it('binds a key to the first request only', async () => {
    const key = keys.idempotency('execute', 'k1');
    expect(await claimIdempotencyKey(raw, { idempotencyKey: key, requestHash: 'h1', authKey: 'auth1', ttlSeconds: 60 })).toEqual({ claimed: true });
    expect(await claimIdempotencyKey(raw, { idempotencyKey: key, requestHash: 'h2', authKey: 'auth2', ttlSeconds: 60 })).toEqual({
      claimed: false,
      requestHash: 'h1',
      authKey: 'auth1',
    });
  });
});
