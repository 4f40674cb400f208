import { devAccount } from '@acg/devnet';
import { createPublicClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paywallWithSettle, startTestGateway, type TestGateway } from './harness.js';
import { challenge, officialPayload, paymentHeader, post, usdcReader } from './x402.js';
import { paymentKeys } from '@acg/payments/commands';

// The x402 `upfront` payment flow (@x402/core PAYMENT_FLOWS: no verify before the handler, settle
// before it), which the gateway offers with its in-process facilitator: one facilitator call per
// payment, settle, whose own re-verify runs the on-chain simulation (`simulateInSettle`).

let t: TestGateway;
let verifyCalls = 0;
const executeUrl = () => `${t.url}/api/v1/execute`;

beforeAll(async () => {
  t = await startTestGateway();
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('x402 upfront payment flow', () => {
  it('the 402 offers the upfront flow in accepts[].extra.paymentFlow', async () => {
    const pr = await challenge(executeUrl(), { capability_id: 'intelligence.wallet_balances', input: { address: t.stack.payment.buyers[0].address } });
    expect(pr.accepts).toHaveLength(1);
    expect(pr.accepts[0].extra).toMatchObject({ name: 'USD Coin', version: '2', paymentFlow: 'upfront' });
  });

  it('a paid call settles without any facilitator verify call, and the buyer pays exactly the price', { timeout: 60_000 }, async () => {
    const saved = t.gateway.services.paywall;
    const paywall = paywallWithSettle(t, (inner, p, r) => inner.settle(p, r), {
      paymentFlow: 'upfront',
      verify: async () => {
        verifyCalls++;
        throw new Error('verify must not be called in the upfront flow');
      },
    });
    await paywall.init();
    t.gateway.services.paywall = paywall;
    try {
      const buyer = t.stack.payment.buyers[1];
      const balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
      const body = { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address } };
      const header = paymentHeader(await officialPayload(buyer, await challenge(executeUrl(), body)));
      const before = await balanceOf(buyer.address);
      const res = await post(executeUrl(), body, { 'PAYMENT-SIGNATURE': header });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'SUCCEEDED', payment: { amount: '1000' } });
      expect(res.headers.get('payment-response')).toBeTruthy();
      expect(verifyCalls).toBe(0);
      expect(before - (await balanceOf(buyer.address))).toBe(1000n);
    } finally {
      t.gateway.services.paywall = saved;
    }
  });

  it('a payer without USDC: 402 from the simulation in settle, nothing broadcast, nothing left reserved', { timeout: 60_000 }, async () => {
    const { services } = t.gateway;
    const chain = createPublicClient({ transport: http(t.stack.payment.rpcUrl) });
    const facilitator = devAccount(0).address;
    const broke = privateKeyToAccount(generatePrivateKey());
    const body = { capability_id: 'intelligence.wallet_balances', input: { address: broke.address } };
    const header = paymentHeader(await officialPayload(broke, await challenge(executeUrl(), body)));
    const nonceBefore = await chain.getTransactionCount({ address: facilitator, blockTag: 'pending' });

    const res = await post(executeUrl(), body, { 'PAYMENT-SIGNATURE': header });
    expect(res.status).toBe(402);
    const refusal = res.body as { reason?: string; message?: string; error?: string };
    expect(refusal.reason).toBe('invalid_exact_evm_insufficient_balance');
    // the caller gets our sentence, never the node's revert text
    expect(`${refusal.message} ${refusal.error}`).not.toMatch(/revert|execution|0x/i);
    // the simulation refused it before any transaction: the facilitator paid no gas
    expect(await chain.getTransactionCount({ address: facilitator, blockTag: 'pending' })).toBe(nonceBefore);
    // the reservation taken before settling was released
    expect(await services.redis.keys(`${services.keys.prefix}pay:auth:*${broke.address.slice(2).toLowerCase()}*`)).toEqual([]);
    expect(await services.redis.zcard(paymentKeys.authorizationsInFlight(services.keys))).toBe(0);
  });
});
