import { authorizationUsed } from '@acg/treasury';
import { createPublicClient, http, type PublicClient } from 'viem';
import { describe, expect, it } from 'vitest';
import { upperCaseAnswer, upperCaseCapability } from '../providerServer.js';
import { useRegisteredProvider } from '../useRegisteredProvider.js';
import { useTestGateway } from '../useTestGateway.js';
import { challenge, officialPayload, paymentHeader, post } from '../x402.js';

/**
 * Attack (issue 36, item 2): quote gas griefing. A `quote_id` already used by an execution, sent
 * again with a fresh payment, was settled on chain and then refunded with 409 `quote_used`: the
 * used-quote check was skipped whenever a payment header was present, so every such request cost
 * the gateway two transactions (the settlement and the refund) and its sender nothing. Now it is
 * refused before settlement: the payer's and the treasury's USDC do not move, the fresh
 * authorization stays unused on chain, the treasury sends nothing (its nonce holds) and no refund
 * is queued; the provider ran once and is credited once. The resend of the payment that used the
 * quote still gets its stored execution. This file failed before the fix (checked).
 */

const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });
const quoted = useRegisteredProvider(t, upperCaseAnswer, { name: 'Quoted Co', capabilities: [upperCaseCapability('upper_grief', '0.25')] });
const CAPABILITY = 'intelligence.upper_grief';

describe('a used quote_id with a fresh payment', () => {
  it('is refused 409 quote_used before settlement: nothing moves on chain, no refund', async () => {
    const chain = createPublicClient({ transport: http(t.stack.payment.rpcUrl) }) as PublicClient;
    const treasury = t.stack.payment.treasury.address;
    const buyer = t.stack.payment.buyers[0];
    const q = await post(`${t.url}/api/v1/quotes`, { capability_id: CAPABILITY, input: { text: 'grief' } });
    expect(q.status).toBe(201);
    const body = { capability_id: CAPABILITY, input: { text: 'grief' }, quote_id: q.body.quote_id };

    // the honest use of the quote
    const asked = await challenge(`${t.url}/api/v1/execute`, body);
    const first = paymentHeader(await officialPayload(buyer, asked));
    const send = (header: string) => post(`${t.url}/api/v1/execute`, body, { 'payment-signature': header });
    const used = await send(first);
    expect(used.status, JSON.stringify(used.body)).toBe(200);
    expect(used.body).toMatchObject({ status: 'SUCCEEDED', payment: { amount: '250000' } });

    const money = async () => ({
      payer: await t.usdc(buyer.address),
      treasury: await t.usdc(treasury),
      treasuryNonce: await chain.getTransactionCount({ address: treasury }),
      refunds: await t.gateway.services.refunds.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed'),
      credited: (await t.gateway.services.providerLedger.totals()).credited,
    });
    const before = await money();

    // fresh payments naming the used quote, one after another and at once
    const fresh = await Promise.all([0, 1, 2].map(async () => officialPayload(buyer, asked)));
    for (const answer of [await send(paymentHeader(fresh[0])), ...(await Promise.all(fresh.slice(1).map((p) => send(paymentHeader(p)))))]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(409);
      expect(answer.body).toMatchObject({ status: 409, reason: 'quote_used', quote_id: q.body.quote_id });
      expect(answer.body.refund).toBeUndefined();
      expect(answer.headers.get('payment-response')).toBeNull();
    }
    for (const p of fresh) {
      const auth = (p.payload as { authorization: { from: `0x${string}`; nonce: `0x${string}` } }).authorization;
      expect(await authorizationUsed(chain, t.stack.payment.usdc, auth.from, auth.nonce)).toBe(false);
    }
    expect(await money()).toEqual(before);

    // the payment that used the quote, sent again: its stored execution, no second charge
    const again = await send(first);
    expect(again.status).toBe(200);
    expect(again.body.execution_id).toBe(used.body.execution_id);
    expect(await money()).toEqual(before);
    expect(
      quoted.server.calls.filter((c) => (c.body.input as { text?: string } | undefined)?.text === 'grief' && c.body.execution_id === used.body.execution_id),
    ).toHaveLength(1);
  });
});
