import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';
import { asReadOnChain, bearerToken, challenge, officialPayload, paymentHeader, post, readExecution, walletBalancesRequest } from '../x402.js';

/**
 * Attack (issue 23, item 3): a settled EIP-3009 authorization is public (`transferWithAuthorization`
 * carries every field and the signature), so anyone can rebuild the PaymentPayload and resend it.
 * It now gets the receipt only (409 `payment_already_used`: `execution_id`, `tx_hash`, where the
 * payer reads the result; no result, no proof), on REST and /trpc alike (MCP: mcp.int.test.ts);
 * the payer gets the result with the payment-identifier it sent or with its bearer token. Nothing
 * is charged again. This file failed on `main` (checked: the rebuilt payload got 200 with the result).
 */

const t = useTestGateway();

/** The PaymentPayload as anyone rebuilds it from the chain (no extensions). */
const fromChain = asReadOnChain;

describe('a resent public payment answers its result to the payer only', () => {
  it('REST and /trpc: receipt without proof; result with the payment-identifier or the bearer token; charged once', async () => {
    const payer = t.stack.payment.buyers[2];
    const treasury = t.stack.payment.treasury.address;
    const target = walletBalancesRequest(payer.address);
    const pr = await challenge(t.executeUrl, target);
    appendPaymentIdentifierToExtensions(pr.extensions!, generatePaymentId());
    const payload = await officialPayload(payer, pr);
    const before = { payer: await t.usdc(payer.address), treasury: await t.usdc(treasury) };
    const paid = await post(t.executeUrl, target, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(paid.status).toBe(200);
    const { execution_id, payment, result, proof } = paid.body;
    expect(proof).toBeTruthy();

    // the attacker's rebuilt payload, on REST and on /trpc
    for (const [at, res] of [
      ['REST', await post(t.executeUrl, target, { 'PAYMENT-SIGNATURE': paymentHeader(fromChain(payload)) })],
      ['/trpc', await post(`${t.url}/trpc/execute.execute`, target, { 'PAYMENT-SIGNATURE': paymentHeader(fromChain(payload)) })],
    ] as const) {
      expect(res.status, at).toBe(409);
      expect(res.contentType, at).toContain('application/problem+json');
      expect(res.body, at).toMatchObject({ reason: 'payment_already_used', execution_id, payment: { tx_hash: payment.tx_hash, amount: payment.amount } });
      expect(res.body.result_url, at).toBe(`${t.url}/api/v1/executions/${execution_id}`);
      expect(JSON.stringify(res.body), at).not.toContain(proof);
      expect(res.body, at).not.toHaveProperty('result');
    }
    // a bearer token of someone else is no proof
    const stranger = await post(t.executeUrl, target, {
      'PAYMENT-SIGNATURE': paymentHeader(fromChain(payload)),
      authorization: `Bearer ${await bearerToken(t.url, t.stack.payment.buyers[3])}`,
    });
    expect(stranger.status).toBe(409);

    // the payer: with the payment-identifier it sent, or its own bearer token
    const withId = await post(t.executeUrl, target, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(withId.status).toBe(200);
    expect(withId.body).toMatchObject({ execution_id, result, proof });
    const withToken = await post(t.executeUrl, target, {
      'PAYMENT-SIGNATURE': paymentHeader(fromChain(payload)),
      authorization: `Bearer ${await bearerToken(t.url, payer)}`,
    });
    expect(withToken.status).toBe(200);
    expect(withToken.body).toMatchObject({ execution_id, result, proof });
    // and where the receipt points
    expect(await readExecution(t.url, execution_id, payer)).toMatchObject({ execution_id, status: 'SUCCEEDED', proof });

    // charged once; the treasury got exactly that
    expect(before.payer - (await t.usdc(payer.address))).toBe(1000n);
    expect((await t.usdc(treasury)) - before.treasury).toBe(1000n);
  });
});
