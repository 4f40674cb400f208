import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';
import { challenge, craftPayload, officialPayload, paymentHeader, post, walletBalancesRequest } from '../x402.js';
import { paymentKeys } from '@acg/payments/commands';

/**
 * Attack (issue 23, item 2): after a paid execute with `Idempotency-Key: K`, anybody sending K
 * with the same body got 200 with the paid result, its proof and a PAYMENT-RESPONSE, without
 * paying (the key was looked up before any payment was read). Now the key is scoped to the payer
 * and looked up only after the payment is read: no payment → the 402 challenge; another payer's
 * payment → its own execution (charged to it), never the first payer's answer; a payload claiming
 * the payer but signed by another key → refused. On-chain balances of the payers and the
 * treasury move by exactly the paid calls. This file failed on `main` (checked: the unpaid
 * request with K got 200 and the first payer's result).
 */

const PRICE = 1000n;
const t = useTestGateway();

describe('Idempotency-Key is the payer’s', () => {
  it('an unpaid request reusing the key gets the challenge; another payer gets its own execution; a forged payer is refused', async () => {
    const [victim, attacker] = [t.stack.payment.buyers[0], t.stack.payment.buyers[1]];
    const key = `shared-key-${Date.now()}`;
    const target = walletBalancesRequest(victim.address);
    const treasury = t.stack.payment.treasury.address;
    const before = { victim: await t.usdc(victim.address), attacker: await t.usdc(attacker.address), treasury: await t.usdc(treasury) };

    const pr = await challenge(t.executeUrl, target);
    const paid = await post(t.executeUrl, target, { 'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(victim, pr)), 'Idempotency-Key': key });
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('SUCCEEDED');

    // 1. no payment at all: the challenge, never the stored answer
    const unpaid = await post(t.executeUrl, target, { 'Idempotency-Key': key });
    expect(unpaid.status).toBe(402);
    expect(unpaid.headers.get('payment-required')).toBeTruthy();
    expect(unpaid.headers.get('payment-response')).toBeNull();
    expect(JSON.stringify(unpaid.body)).not.toContain(paid.body.execution_id);

    // 2. a payload claiming to be the victim, signed by the attacker: refused, nothing stored served
    const forged = await craftPayload(attacker, pr.accepts[0], 8453, { from: victim.address });
    const claimed = await post(t.executeUrl, target, { 'PAYMENT-SIGNATURE': paymentHeader(forged), 'Idempotency-Key': key });
    expect(claimed.status).toBe(402);
    expect(JSON.stringify(claimed.body)).not.toContain(paid.body.execution_id);

    // 3. the attacker pays for itself with the same key and body: its own execution, its own charge
    const own = await post(t.executeUrl, target, { 'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(attacker, pr)), 'Idempotency-Key': key });
    expect(own.status).toBe(200);
    expect(own.body.execution_id).not.toBe(paid.body.execution_id);
    expect(own.body.proof).not.toBe(paid.body.proof);

    // money: each payer paid once, the treasury received both, nothing else moved
    expect(before.victim - (await t.usdc(victim.address))).toBe(PRICE);
    expect(before.attacker - (await t.usdc(attacker.address))).toBe(PRICE);
    expect((await t.usdc(treasury)) - before.treasury).toBe(2n * PRICE);
    // the keys live per payer in Redis
    const { redis, keys } = t.gateway.services;
    expect(await redis.exists(paymentKeys.idempotency(keys, 'execute', `${victim.address.toLowerCase()}:${key}`))).toBe(1);
    expect(await redis.exists(paymentKeys.idempotency(keys, 'execute', `${attacker.address.toLowerCase()}:${key}`))).toBe(1);
    expect(await redis.exists(paymentKeys.idempotency(keys, 'execute', key))).toBe(0);
  });
});
