import { requestHash } from '@acg/payments';
import { readRefund } from '@acg/treasury';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { recoverPayments } from './harness.js';
import { asReadOnChain, bearerToken, challenge, officialPayload, paymentHeader, post, paidExecuteRequest } from './x402.js';
import { paymentKeys } from '@acg/payments/commands';

const t = useTestGateway();

describe('crash recovery of paid requests', () => {
  it('refunds a payment that settled but whose operation never completed, and a replay gets that answer', async () => {
    const { services } = t.gateway;
    const buyer = t.stack.payment.buyers[0];
    const { body, header, req: paywallReq } = await paidExecuteRequest(t.url, buyer, { price: 1000n, operationId: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T' });
    const before = await t.usdc(buyer.address);
    const req = {
      ...paywallReq,
      // the payer's proof for a resent payment (its bearer token's wallet)
      payerAccount: async () => buyer.address,
    };
    // the process "dies" after settlement: the operation never returns
    void services.paywall.handle(req, () => new Promise(() => undefined));
    const inflight = paymentKeys.authorizationsInFlight(services.keys);
    let authKey: string | undefined;
    for (let i = 0; i < 100; i++) {
      [authKey] = await services.redis.zrange(inflight, '0', '0');
      if (authKey && (await services.redis.hget(authKey, 'state')) === 'settled') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await services.redis.hget(authKey!, 'state')).toBe('settled');
    expect(before - (await t.usdc(buyer.address))).toBe(1000n);

    // a reservation that is still young is left alone
    expect(await recoverPayments(t)).toEqual({ refunded: [], released: [], completed: [] });
    const round = await recoverPayments(t, { olderThanMs: 0 });
    expect(round.refunded).toEqual([req.operationId]);
    expect(await services.redis.zscore(inflight, authKey!)).toBeNull();

    for (let i = 0; i < 200 && (await t.usdc(buyer.address)) !== before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await t.usdc(buyer.address)).toBe(before);

    const replay = await services.paywall.handle(req, async () => {
      throw new Error('must not run again');
    });
    expect(replay).toMatchObject({ kind: 'response', status: 502, replayed: true });
    expect((replay as { body: { refund: { amount: string } } }).body.refund.amount).toBe('1000');

    // over HTTP, the replay names the execution reserved with the payment, and the refund once mined
    for (let i = 0; i < 200 && (await readRefund(services.redis, services.keys, req.operationId))?.status !== 'sent'; i++)
      await new Promise((r) => setTimeout(r, 50));
    const refund = await readRefund(services.redis, services.keys, req.operationId);
    expect(refund).toMatchObject({ status: 'sent', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const http = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': header, authorization: `Bearer ${await bearerToken(t.url, buyer)}` });
    expect(http.status).toBe(502);
    expect(http.contentType).toMatch(/application\/problem\+json/);
    expect(http.body).toMatchObject({ execution_id: req.operationId, refund: { status: 'sent', amount: '1000', tx_hash: refund!.tx_hash } });
  });

  it('a replay that reconciles a stale settled payment runs it under the execution id reserved with the payment', async () => {
    const { services } = t.gateway;
    const buyer = t.stack.payment.buyers[2];
    const body = { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } };
    const payload = await officialPayload(buyer, await challenge(t.executeUrl, body));
    const header = paymentHeader(payload);
    const req = {
      resourceUrl: t.executeUrl,
      description: 'Execute intelligence.wallet_balances',
      price: 1000n,
      route: 'execute',
      requestHash: requestHash('POST', 'execute', body),
      operationId: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S9C',
      getHeader: (name: string) => (name === 'payment-signature' ? header : undefined),
      payerAccount: async () => buyer.address,
    };
    void services.paywall.handle(req, () => new Promise(() => undefined));
    const inflight = paymentKeys.authorizationsInFlight(services.keys);
    let authKey: string | undefined;
    for (let i = 0; i < 100; i++) {
      authKey = (await services.redis.zrange(inflight, '0', '-1')).find(Boolean);
      if (authKey && (await services.redis.hget(authKey, 'state')) === 'settled') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await services.redis.hget(authKey!, 'operation_id')).toBe(req.operationId);
    // the process that settled it "died" long ago: the reservation is stale
    await services.redis.hset(authKey!, 'updated_at', '1');
    // without proof of being the payer, a resend neither takes the run over nor gets its result
    const stranger = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': paymentHeader(asReadOnChain(payload)) });
    expect(stranger.status).toBe(409);
    expect(stranger.body).toMatchObject({ reason: 'payment_already_used', execution_id: req.operationId });
    expect(await services.executions.get(req.operationId)).toBeUndefined();
    const r = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': header, authorization: `Bearer ${await bearerToken(t.url, buyer)}` });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'SUCCEEDED', execution_id: req.operationId });
    expect((await services.executions.get(req.operationId))?.status).toBe('SUCCEEDED');
  });

  it('releases a reservation whose authorization never reached the chain (nothing was charged)', async () => {
    const { services } = t.gateway;
    const inflight = paymentKeys.authorizationsInFlight(services.keys);
    const authKey = paymentKeys.authorization(services.keys, 'eip155:8453', t.stack.payment.usdc, t.stack.payment.buyers[1].address, `0x${'77'.repeat(32)}`);
    await services.redis.hset(
      authKey,
      'state',
      'pending',
      'operation_id',
      'exe_x',
      'asset',
      t.stack.payment.usdc,
      'payer',
      t.stack.payment.buyers[1].address,
      'nonce',
      `0x${'77'.repeat(32)}`,
      'amount',
      '1000',
    );
    await services.redis.zadd(inflight, 1, authKey);
    const round = await recoverPayments(t, { olderThanMs: 0 });
    expect(round).toEqual({ refunded: [], released: ['exe_x'], completed: [] });
    expect(await services.redis.exists(authKey)).toBe(0);
  });
});
