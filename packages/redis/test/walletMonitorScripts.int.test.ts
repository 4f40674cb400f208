import { describe, expect, it } from 'vitest';
import { cancelSubscription, renewSubscription } from '@acg/wallet-monitor/commands';
import { releaseLease, takeLease } from '../src/index.js';
import { BACKENDS, useBackend } from './backends.js';
import { accountKeys } from '@acg/accounts/commands';
import { treasuryKeys } from '@acg/treasury';
import { walletMonitorKeys } from '@acg/wallet-monitor/commands';

// every script on a private redis-server and on a private 3-master Redis Cluster (hash-tagged prefix)
describe.each(BACKENDS)('on %s', (backend) => {
  const db = useBackend(backend, 'wm');
  const { keys } = db;

  const OWNER = '0x00000000000000000000000000000000000000Aa';

  async function subscription(id: string, expiresAt: number, owner = OWNER) {
    await db.redis.hset(walletMonitorKeys.walletMonitor(keys, 'sub', id), { id, owner, status: 'active', expires_at: expiresAt, renewals: 0 });
    await db.redis.zadd(walletMonitorKeys.walletMonitor(keys, 'expiry'), expiresAt, id);
  }

  describe('wm_cancel_subscription', () => {
    it('cancels for the owner only (any case), once; a second cancel returns the first time', async () => {
      await subscription('sub_A', 1000);
      const sub = walletMonitorKeys.walletMonitor(keys, 'sub', 'sub_A');
      const expiry = walletMonitorKeys.walletMonitor(keys, 'expiry');
      expect(
        await cancelSubscription(db.redis, {
          subscriptionKey: sub,
          expiryKey: expiry,
          caller: '0x00000000000000000000000000000000000000bb',
          nowSeconds: 50,
          subscriptionId: 'sub_A',
        }),
      ).toEqual({ result: 'forbidden', cancelledAt: '' });
      expect(await db.redis.hget(sub, 'status')).toBe('active');
      expect(
        await cancelSubscription(db.redis, { subscriptionKey: sub, expiryKey: expiry, caller: OWNER.toLowerCase(), nowSeconds: 50, subscriptionId: 'sub_A' }),
      ).toEqual({ result: 'cancelled', cancelledAt: '50' });
      expect(await db.redis.hmget(sub, 'status', 'cancelled_at')).toEqual(['cancelled', '50']);
      expect(await db.redis.zscore(expiry, 'sub_A')).toBeNull();
      expect(
        await cancelSubscription(db.redis, { subscriptionKey: sub, expiryKey: expiry, caller: OWNER.toLowerCase(), nowSeconds: 99, subscriptionId: 'sub_A' }),
      ).toEqual({ result: 'already', cancelledAt: '50' });
      expect(
        await cancelSubscription(db.redis, {
          subscriptionKey: walletMonitorKeys.walletMonitor(keys, 'sub', 'nope'),
          expiryKey: expiry,
          caller: OWNER,
          nowSeconds: 99,
          subscriptionId: 'nope',
        }),
      ).toEqual({ result: 'not_found', cancelledAt: '' });
    });
  });

  describe('wm_renew_subscription', () => {
    const run = (id: string, now: number, min = 1000, owner = OWNER) =>
      renewSubscription(db.redis, {
        subscriptionKey: walletMonitorKeys.walletMonitor(keys, 'sub', id),
        accountKey: accountKeys.account(keys, owner),
        expiryKey: walletMonitorKeys.walletMonitor(keys, 'expiry'),
        nowSeconds: now,
        termSeconds: 100,
        minBalance: String(min),
        subscriptionId: id,
      }).then((r) => [r.result, r.expiresAt]);

    it('renews by whole terms while the account holds the minimum balance', async () => {
      await subscription('sub_R', 1000);
      await db.redis.hset(accountKeys.account(keys, OWNER), 'balance', '1000');
      expect(await run('sub_R', 999)).toEqual(['not_due', '1000']);
      expect(await run('sub_R', 1000)).toEqual(['renewed', '1100']);
      expect(await run('sub_R', 1350)).toEqual(['renewed', '1400']); // overdue by several terms
      expect(await db.redis.hmget(walletMonitorKeys.walletMonitor(keys, 'sub', 'sub_R'), 'status', 'expires_at', 'renewals')).toEqual(['active', '1400', '2']);
      expect(await db.redis.zscore(walletMonitorKeys.walletMonitor(keys, 'expiry'), 'sub_R')).toBe('1400');
    });

    it('expires when the balance is below the minimum, and leaves cancelled ones alone', async () => {
      const poor = '0x00000000000000000000000000000000000000cc';
      await subscription('sub_E', 500, poor);
      await db.redis.hset(accountKeys.account(keys, poor), 'balance', '999');
      expect(await run('sub_E', 600, 1000, poor)).toEqual(['expired', '500']);
      expect(await db.redis.hget(walletMonitorKeys.walletMonitor(keys, 'sub', 'sub_E'), 'status')).toBe('expired');
      expect(await db.redis.zscore(walletMonitorKeys.walletMonitor(keys, 'expiry'), 'sub_E')).toBeNull();
      expect(await run('sub_E', 700, 1000, poor)).toEqual(['inactive', '500']);
      await db.redis.zadd(walletMonitorKeys.walletMonitor(keys, 'expiry'), 1, 'sub_gone');
      expect(await run('sub_gone', 700)).toEqual(['missing', '']);
      expect(await db.redis.zscore(walletMonitorKeys.walletMonitor(keys, 'expiry'), 'sub_gone')).toBeNull();
    });
  });

  describe('wm_lease', () => {
    it('gives the lease to one holder until it lapses', async () => {
      const key = walletMonitorKeys.walletMonitor(keys, 'lease', 'ethereum');
      expect(await takeLease(db.redis, { leaseKey: key, holder: 'a', leaseMs: 10_000 })).toBe(true);
      expect(await takeLease(db.redis, { leaseKey: key, holder: 'b', leaseMs: 10_000 })).toBe(false);
      expect(await takeLease(db.redis, { leaseKey: key, holder: 'a', leaseMs: 10_000 })).toBe(true);
      expect(await db.redis.pttl(key)).toBeGreaterThan(0);
      await db.redis.del(key);
      expect(await takeLease(db.redis, { leaseKey: key, holder: 'b', leaseMs: 10_000 })).toBe(true);
    });

    it('is released only by its holder (release_lease)', async () => {
      const key = treasuryKeys.treasurySendLock(keys, '0xAbC0000000000000000000000000000000000001');
      expect(key).toBe(`${keys.prefix}treasury-send:0xabc0000000000000000000000000000000000001`);
      expect(await takeLease(db.redis, { leaseKey: key, holder: 'a', leaseMs: 10_000 })).toBe(true);
      expect(await releaseLease(db.redis, { leaseKey: key, holder: 'b' })).toBe(false);
      expect(await takeLease(db.redis, { leaseKey: key, holder: 'b', leaseMs: 10_000 })).toBe(false);
      expect(await releaseLease(db.redis, { leaseKey: key, holder: 'a' })).toBe(true);
      expect(await releaseLease(db.redis, { leaseKey: key, holder: 'a' })).toBe(false);
      expect(await takeLease(db.redis, { leaseKey: key, holder: 'b', leaseMs: 10_000 })).toBe(true);
    });
  });
});
