import { readRefund } from '@acg/treasury';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';
import { post, paidExecuteRequest } from '../x402.js';

// issue 28 item 4: a paid call answered 503 "retry after" after its payment settled is refunded;
// once the refund is sent, a replay of that payment says so instead of "retry after 5 s" forever.
const t = useTestGateway();

describe('replay of a refunded 503', () => {
  it('says the payment was refunded (502, refund sent with its tx hash), without Retry-After', { timeout: 120_000 }, async () => {
    const { services } = t.gateway;
    const buyer = t.stack.payment.buyers[4];
    const { body, header, req } = await paidExecuteRequest(t.url, buyer, { price: 1000n, operationId: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8W' });
    const before = await t.usdc(buyer.address);
    // the operation met a store outage after settlement: a refunded 503 with Retry-After
    const first = await services.paywall.handle(req, async () => {
      throw Object.assign(new Error('Command timed out'), { name: 'Error' });
    });
    expect(first).toMatchObject({ kind: 'response', status: 503, headers: { 'Retry-After': '5' }, body: { refund: { status: 'pending', amount: '1000' } } });

    for (let i = 0; i < 200 && (await readRefund(services.redis, services.keys, req.operationId))?.status !== 'sent'; i++)
      await new Promise((r) => setTimeout(r, 50));
    const refund = await readRefund(services.redis, services.keys, req.operationId);
    expect(refund).toMatchObject({ status: 'sent', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await t.usdc(buyer.address)).toBe(before);

    const replay = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': header });
    expect(replay.status, JSON.stringify(replay.body)).toBe(502);
    expect(replay.headers.get('retry-after')).toBeNull();
    expect(replay.body).toMatchObject({ status: 502, refund: { status: 'sent', amount: '1000', tx_hash: refund!.tx_hash } });
    expect(replay.body.detail).toMatch(/refunded/);
    expect(await t.usdc(buyer.address)).toBe(before);
  });
});
