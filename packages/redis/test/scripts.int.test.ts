import { describe, expect, it } from 'vitest';
import { addBundle, type AddBundleParameters } from '@acg/bundles/commands';
import {
  claimIdempotencyKey,
  readAuthorization,
  releaseAuthorization,
  releaseBinding,
  reserveAuthorization,
  transitionAuthorization,
  type AuthorizationState,
} from '@acg/payments/commands';
import { deleteFieldsIfEqual } from '../src/index.js';
import { BACKENDS, useBackend } from './backends.js';
import { accountKeys } from '@acg/accounts/commands';
import { bundleKeys } from '@acg/bundles/commands';
import { paymentKeys } from '@acg/payments/commands';
import { treasuryKeys } from '@acg/treasury';

// every script on a private redis-server and on a private 3-master Redis Cluster (hash-tagged prefix)
describe.each(BACKENDS)('on %s', (backend) => {
  const db = useBackend(backend, 'scripts');
  const { keys } = db;

  const inFlightKey = paymentKeys.authorizationsInFlight(keys);
  const reserve = (authKey: string, requestHash: string, payloadHash: string, operationId: string, nowMs: number) =>
    reserveAuthorization(db.redis, {
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
      const key = paymentKeys.authorization(keys, 'eip155:8453', '0xA', '0xB', '0x01');
      expect(await reserve(key, 'req1', 'pay1', 'exe_1', 1000)).toEqual({ reserved: true });
      expect(await reserve(key, 'req2', 'pay2', 'exe_2', 2000)).toEqual({
        reserved: false,
        existing: { state: 'pending', requestHash: 'req1', payloadHash: 'pay1', operationId: 'exe_1', updatedAtMs: 1000 },
      });
      expect(await readAuthorization(db.redis, key)).toEqual({
        state: 'pending',
        requestHash: 'req1',
        payloadHash: 'pay1',
        operationId: 'exe_1',
        updatedAtMs: 1000,
      });
      expect(await db.redis.hmget(key, 'asset', 'payer', 'nonce', 'amount')).toEqual(['0xA', '0xB', '0x01', '1000']);
      expect(await db.redis.ttl(key)).toBeGreaterThan(0);
      expect(await db.redis.zscore(inFlightKey, key)).toBe('1000');
    });

    it('lets exactly one of many concurrent reservations win', async () => {
      const key = paymentKeys.authorization(keys, 'eip155:8453', '0xA', '0xC', '0x02');
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => reserve(key, 'r', 'p', `exe_${i}`, i)));
      expect(results.filter((r) => r.reserved)).toHaveLength(1);
    });
  });

  describe('transition_authorization', () => {
    it('moves state only for the holder and from an expected state', async () => {
      const key = paymentKeys.authorization(keys, 'eip155:8453', '0xA', '0xD', '0x03');
      const move = (operationId: string, from: AuthorizationState[], to: AuthorizationState, nowMs: number, fields?: Record<string, string>) =>
        transitionAuthorization(db.redis, { authKey: key, inFlightKey, operationId, from, to, nowMs, fields });
      await reserve(key, 'r', 'p', 'exe_1', 1);
      expect(await move('exe_other', ['pending'], 'settled', 2)).toBe(false);
      expect(await move('exe_1', ['settled'], 'completed', 2)).toBe(false);
      expect(await move('exe_1', ['pending', 'settle_unknown'], 'settled', 3, { tx_hash: '0xabc' })).toBe(true);
      expect(await db.redis.hmget(key, 'state', 'tx_hash', 'updated_at')).toEqual(['settled', '0xabc', '3']);
      expect(await db.redis.zscore(inFlightKey, key)).toBe('3');
      expect(await move('exe_1', ['settled'], 'completed', 4, { response: '{}' })).toBe(true);
      expect(await db.redis.hmget(key, 'state', 'response')).toEqual(['completed', '{}']);
      expect(await db.redis.zscore(inFlightKey, key)).toBeNull();
    });
  });

  describe('release_authorization', () => {
    it('deletes a reservation only for its holder, from an expected state', async () => {
      const key = paymentKeys.authorization(keys, 'eip155:8453', '0xA', '0xE', '0x04');
      const release = (operationId: string, from: ('pending' | 'settle_unknown' | 'settled')[]) =>
        releaseAuthorization(db.redis, { authKey: key, inFlightKey, operationId, from });
      await reserve(key, 'r', 'p', 'exe_1', 1);
      expect(await release('exe_other', ['pending'])).toBe(false);
      expect(await release('exe_1', ['settle_unknown', 'settled'])).toBe(false);
      expect(await db.redis.exists(key)).toBe(1);
      expect(await release('exe_1', ['pending', 'settle_unknown'])).toBe(true);
      expect(await db.redis.exists(key)).toBe(0);
      expect(await db.redis.zscore(inFlightKey, key)).toBeNull();
      expect(await transitionAuthorization(db.redis, { authKey: key, inFlightKey, operationId: 'exe_1', from: ['pending'], to: 'settled', nowMs: 3 })).toBe(
        false,
      );
      expect(await release('exe_1', ['pending'])).toBe(false);
    });
  });

  describe('claim_idempotency_key', () => {
    it('binds a key to the first request only', async () => {
      const key = paymentKeys.idempotency(keys, 'execute', 'k1');
      expect(await claimIdempotencyKey(db.redis, { idempotencyKey: key, requestHash: 'h1', authKey: 'auth1', ttlSeconds: 60 })).toEqual({ claimed: true });
      expect(await claimIdempotencyKey(db.redis, { idempotencyKey: key, requestHash: 'h2', authKey: 'auth2', ttlSeconds: 60 })).toEqual({
        claimed: false,
        requestHash: 'h1',
        authKey: 'auth1',
      });
    });
  });

  describe('hdel_if_equal', () => {
    it('deletes the fields only while the compared field holds the expected value', async () => {
      const key = treasuryKeys.refund(keys, 'op_hdel');
      await db.redis.hset(key, 'status', 'pending', 'raw_tx', '0x01', 'tx_hash', '0xaa', 'nonce', '7');
      expect(await deleteFieldsIfEqual(db.redis, { key, field: 'tx_hash', expected: '0xbb', fields: ['raw_tx', 'tx_hash', 'nonce'] })).toBe(false);
      expect(await db.redis.hgetall(key)).toEqual({ status: 'pending', raw_tx: '0x01', tx_hash: '0xaa', nonce: '7' });
      expect(await deleteFieldsIfEqual(db.redis, { key, field: 'tx_hash', expected: '0xaa', fields: ['raw_tx', 'tx_hash', 'nonce'] })).toBe(true);
      expect(await db.redis.hgetall(key)).toEqual({ status: 'pending' });
      expect(await deleteFieldsIfEqual(db.redis, { key, field: 'tx_hash', expected: '0xaa', fields: ['raw_tx'] })).toBe(false);
    });
  });

  describe('release_binding', () => {
    it('unbinds a key only from the payment it points to', async () => {
      const key = paymentKeys.paymentIdentifier(keys, 'pay_release_binding_0001');
      await claimIdempotencyKey(db.redis, { idempotencyKey: key, requestHash: 'payload1', authKey: 'auth1', ttlSeconds: 60 });
      expect(await releaseBinding(db.redis, { bindingKey: key, authKey: 'auth2' })).toBe(false);
      expect(await db.redis.exists(key)).toBe(1);
      expect(await releaseBinding(db.redis, { bindingKey: key, authKey: 'auth1' })).toBe(true);
      expect(await db.redis.exists(key)).toBe(0);
      expect(await releaseBinding(db.redis, { bindingKey: key, authKey: 'auth1' })).toBe(false);
      // free again: the next payment binds it
      expect(await claimIdempotencyKey(db.redis, { idempotencyKey: key, requestHash: 'payload2', authKey: 'auth2', ttlSeconds: 60 })).toEqual({
        claimed: true,
      });
    });
  });

  describe('bundle_add', () => {
    const searcher = '0xabc';
    const params = (over: Partial<AddBundleParameters> = {}): AddBundleParameters => ({
      statsKey: bundleKeys.builder(keys, 'stats'),
      searcherKey: bundleKeys.builder(keys, 'searcher', searcher),
      accountKey: accountKeys.account(keys, searcher),
      usageKey: accountKeys.accountUsage(keys, searcher),
      uuidKey: bundleKeys.builder(keys, 'uuid', searcher, '-'),
      uuidValue: '',
      pricedKey: bundleKeys.builder(keys, 'priced', searcher, '10:0xh1'),
      nonceKey: bundleKeys.builder(keys, 'uuidnonce', searcher, '-'),
      bundleHash: '0xh1',
      blocks: [10, 11].map((b) => ({
        poolKey: bundleKeys.builder(keys, 'pool', b),
        statsKey: bundleKeys.builder(keys, 'bstats', b, '0xh1'),
        json: `{"b":${b}}`,
      })),
      field: `${searcher}:0xh1`,
      receiptField: `recv:${searcher}`,
      receivedAtMs: 1000,
      receivedAtIso: '1970-01-01T00:00:01.000Z',
      requiredTxs: '0xt1,0xt2',
      poolTtlSeconds: 60,
      statsTtlSeconds: 120,
      amount: 100_000n,
      paidBy: 'rpc',
      usageLine: '{"kind":"debit"}',
      maxUsageLines: 10,
      ...over,
    });

    it('queues for every block, keeps the first receipt, counts once, and prices: paid, debited while the account holds the price, else owed', async () => {
      await db.redis.hset(accountKeys.account(keys, searcher), 'balance', '150000');
      expect(await addBundle(db.redis, params())).toEqual({ charged: 'debited', balance: '50000', resent: false, receivedAtMs: 1000 });
      expect(await db.redis.hgetall(bundleKeys.builder(keys, 'pool', 10))).toEqual({ [`${searcher}:0xh1`]: '{"b":10}' });
      expect(await db.redis.hgetall(bundleKeys.builder(keys, 'pool', 11))).toEqual({ [`${searcher}:0xh1`]: '{"b":11}' });
      expect(await db.redis.hgetall(bundleKeys.builder(keys, 'bstats', 11, '0xh1'))).toEqual({ [`recv:${searcher}`]: '1000', txs: '0xt1,0xt2' });
      expect(await db.redis.ttl(bundleKeys.builder(keys, 'bstats', 11, '0xh1'))).toBeGreaterThan(60);
      expect(await db.redis.lrange(accountKeys.accountUsage(keys, searcher), 0, -1)).toEqual(['{"kind":"debit"}']);

      expect(await addBundle(db.redis, params({ receivedAtMs: 2000, pricedKey: bundleKeys.builder(keys, 'priced', searcher, '10:0xh2') }))).toEqual({
        charged: 'owed',
        balance: '50000',
        resent: false,
        // the first receipt is kept and answered
        receivedAtMs: 1000,
      });
      expect(await db.redis.hget(bundleKeys.builder(keys, 'bstats', 10, '0xh1'), `recv:${searcher}`)).toBe('1000');
      expect(await addBundle(db.redis, params({ paidBy: 'x402' }))).toEqual({ charged: 'paid', balance: '', resent: false, receivedAtMs: 1000 });
      expect(await db.redis.hgetall(bundleKeys.builder(keys, 'searcher', searcher))).toEqual({
        bundles: '3',
        last_bundle_at: '1970-01-01T00:00:01.000Z',
        debited_base_units: '100000',
        owed_base_units: '100000',
        paid_base_units: '100000',
      });
      expect(await db.redis.hgetall(accountKeys.account(keys, searcher))).toMatchObject({ balance: '50000', spent: '100000' });
      expect(await db.redis.hget(bundleKeys.builder(keys, 'stats'), 'bids_received')).toBe('3');
    });

    it('a resend of a priced bundle (same marker) is stored again but neither counted nor priced again', async () => {
      const who = '0xdef';
      const mine = (over: Partial<AddBundleParameters> = {}) =>
        params({
          searcherKey: bundleKeys.builder(keys, 'searcher', who),
          accountKey: accountKeys.account(keys, who),
          usageKey: accountKeys.accountUsage(keys, who),
          pricedKey: bundleKeys.builder(keys, 'priced', who, '10:0xh1'),
          statsKey: bundleKeys.builder(keys, 'stats', who),
          ...over,
        });
      await db.redis.hset(accountKeys.account(keys, who), 'balance', '500000');
      expect(await addBundle(db.redis, mine())).toEqual({ charged: 'debited', balance: '400000', resent: false, receivedAtMs: 1000 });
      for (let i = 0; i < 3; i++) expect(await addBundle(db.redis, mine())).toEqual({ charged: 'debited', balance: '', resent: true, receivedAtMs: 1000 });
      expect(await db.redis.hget(accountKeys.account(keys, who), 'balance')).toBe('400000');
      expect(await db.redis.llen(accountKeys.accountUsage(keys, who))).toBe(1);
      expect(await db.redis.hget(bundleKeys.builder(keys, 'searcher', who), 'bundles')).toBe('1');
      expect(await db.redis.hget(bundleKeys.builder(keys, 'stats', who), 'bids_received')).toBe('1');
      // another bundle (another marker) is priced
      expect(await addBundle(db.redis, mine({ pricedKey: bundleKeys.builder(keys, 'priced', who, '10:0xh9') }))).toMatchObject({
        charged: 'debited',
        resent: false,
      });
      expect(await db.redis.hget(accountKeys.account(keys, who), 'balance')).toBe('300000');
    });

    it('swaps the replacement uuid and returns the former value', async () => {
      const uuidKey = bundleKeys.builder(keys, 'uuid', searcher, 'u1');
      expect(await addBundle(db.redis, params({ uuidKey, uuidValue: '10|a' }))).toMatchObject({ previous: undefined });
      expect(await addBundle(db.redis, params({ uuidKey, uuidValue: '10|b' }))).toMatchObject({ previous: '10|a' });
      expect(await db.redis.get(uuidKey)).toBe('10|b');
    });

    it('orders a uuid by replacementNonce: a newer one replaces, an older or equal other one is refused and writes nothing', async () => {
      const uuidKey = bundleKeys.builder(keys, 'uuid', searcher, 'n1');
      const nonceKey = bundleKeys.builder(keys, 'uuidnonce', searcher, 'n1');
      const poolKey = bundleKeys.builder(keys, 'pool', 77);
      const at = (nonce: number | undefined, hash: string) =>
        params({
          uuidKey,
          nonceKey,
          uuidValue: `77|${searcher}:${hash}`,
          field: `${searcher}:${hash}`,
          bundleHash: hash,
          replacementNonce: nonce,
          pricedKey: bundleKeys.builder(keys, 'priced', searcher, '77:uuid:n1'),
          blocks: [{ poolKey, statsKey: bundleKeys.builder(keys, 'bstats', 77, hash), json: `{"h":"${hash}"}` }],
        });
      expect(await addBundle(db.redis, at(5, '0xa5'))).toMatchObject({ resent: false });
      expect(await db.redis.get(nonceKey)).toBe('5|0xa5');
      expect(await addBundle(db.redis, at(4, '0xa4'))).toEqual({ refused: 'stale_nonce', lastNonce: 5 });
      expect(await addBundle(db.redis, at(5, '0xb5'))).toEqual({ refused: 'stale_nonce', lastNonce: 5 });
      expect(await addBundle(db.redis, at(undefined, '0xc0'))).toEqual({ refused: 'nonce_required', lastNonce: 5 });
      expect(Object.keys(await db.redis.hgetall(poolKey))).toEqual([`${searcher}:0xa5`]);
      // the same bundle with the same nonce is a resend, answered alike
      expect(await addBundle(db.redis, at(5, '0xa5'))).toMatchObject({ resent: true });
      expect(await addBundle(db.redis, at(6, '0xa6'))).toMatchObject({ previous: `77|${searcher}:0xa5` });
      expect(await db.redis.get(nonceKey)).toBe('6|0xa6');
    });
  });
});
