import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { asReadOnChain, bearerToken, challenge, craftPayload, officialPayload, paymentHeader, post, readExecution, walletBalancesRequest } from './x402.js';
import { paymentKeys } from '@acg/payments/commands';

const PRICE = 1000n; // intelligence.wallet_balances: 0.001 USDC in base units

const t = useTestGateway({ config: { chains: { ethereum: 'http://127.0.0.1:1' } } });

describe('402 challenge', () => {
  it('answers an unpaid call with PAYMENT-REQUIRED (x402 v2) and the docs/spec-notes.md 2.9 body fields', async () => {
    const buyer = t.stack.payment.buyers[0];
    const r = await post(t.executeUrl, walletBalancesRequest(buyer.address));
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({
      x402Version: 2,
      scheme: 'exact',
      network: 'eip155:8453',
      payTo: t.stack.payment.treasury.address,
      maxAmountRequired: PRICE.toString(),
      asset: t.stack.payment.usdc,
    });
    expect(r.body.accepts).toHaveLength(1);
    expect(r.body.resource.url).toBe(t.executeUrl);
    const pr = await challenge(t.executeUrl, walletBalancesRequest(buyer.address));
    expect(pr.x402Version).toBe(2);
    expect(pr.accepts[0]).toMatchObject({ scheme: 'exact', network: 'eip155:8453', amount: '1000', extra: { name: 'USD Coin', version: '2' } });
  });
});

describe('paid execute', () => {
  it('settles on-chain with the official @x402/fetch client and moves exactly the price', async () => {
    const buyer = t.stack.payment.buyers[1];
    const treasury = t.stack.payment.treasury.address;
    const [payerBefore, treasuryBefore] = await Promise.all([t.usdc(buyer.address), t.usdc(treasury)]);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer as never });
    const pay = wrapFetchWithPayment(fetch, client);
    const res = await pay(t.executeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(walletBalancesRequest(buyer.address)),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.status).toBe('SUCCEEDED');
    expect(body.execution_id).toMatch(/^exe_[0-9A-Z]{26}$/);
    expect(body.payment.amount).toBe('1000');
    expect(body.payment.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(body.result.address).toBe(buyer.address);
    expect(body.result.chain_id).toBe(8453);
    const settle = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settle.success).toBe(true);
    expect(settle.transaction).toBe(body.payment.tx_hash);
    const [payerAfter, treasuryAfter] = await Promise.all([t.usdc(buyer.address), t.usdc(treasury)]);
    expect(payerBefore - payerAfter).toBe(PRICE);
    expect(treasuryAfter - treasuryBefore).toBe(PRICE);
    // a read-only capability may run while its payment settles: the balance it reports is the
    // payer's balance at the block it names, before or after this payment
    expect(BigInt(body.result.usdc.balance)).toBe(await t.usdc(buyer.address, BigInt(body.result.block_number)));
    expect([payerBefore, payerAfter]).toContain(BigInt(body.result.usdc.balance));
    const stored = await readExecution(t.url, body.execution_id, buyer);
    expect(stored).toMatchObject({ execution_id: body.execution_id, status: 'SUCCEEDED', capability_id: 'intelligence.wallet_balances' });
  });

  it('accepts the legacy X-PAYMENT header and a v1 payload', async () => {
    const buyer = t.stack.payment.buyers[2];
    const pr = await challenge(t.executeUrl, walletBalancesRequest(buyer.address));
    const v2 = await officialPayload(buyer, pr);
    const v1 = { x402Version: 1, scheme: 'exact', network: 'base', payload: v2.payload };
    const before = await t.usdc(buyer.address);
    const r = await post(t.executeUrl, walletBalancesRequest(buyer.address), { 'X-PAYMENT': Buffer.from(JSON.stringify(v1)).toString('base64') });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('SUCCEEDED');
    expect(before - (await t.usdc(buyer.address))).toBe(PRICE);
  });

  it('a replayed payment is charged once; its result goes to the payer only (bearer token), others get the receipt', async () => {
    const buyer = t.stack.payment.buyers[3];
    const pr = await challenge(t.executeUrl, walletBalancesRequest(buyer.address));
    const payload = await officialPayload(buyer, pr);
    const header = paymentHeader(asReadOnChain(payload));
    const before = await t.usdc(buyer.address);
    const first = await post(t.executeUrl, walletBalancesRequest(buyer.address), { 'PAYMENT-SIGNATURE': header });
    expect(first.status).toBe(200);
    // a settled authorization is public on-chain: without proof of being the payer, the receipt only
    const second = await post(t.executeUrl, walletBalancesRequest(buyer.address), { 'PAYMENT-SIGNATURE': header });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ reason: 'payment_already_used', execution_id: first.body.execution_id, payment: first.body.payment });
    expect(second.body).not.toHaveProperty('result');
    expect(second.body).not.toHaveProperty('proof');
    const third = await post(t.executeUrl, walletBalancesRequest(buyer.address), {
      'PAYMENT-SIGNATURE': header,
      authorization: `Bearer ${await bearerToken(t.url, buyer)}`,
    });
    expect(third.status).toBe(200);
    expect(third.body).toEqual(first.body);
    expect(before - (await t.usdc(buyer.address))).toBe(PRICE);
    // the same payment for a different request is a conflict, not a second run
    const other = await post(t.executeUrl, walletBalancesRequest(t.stack.payment.treasury.address), { 'PAYMENT-SIGNATURE': header });
    expect(other.status).toBe(409);
    expect(other.body.reason).toBe('payment_conflict');
    expect(other.contentType).toContain('application/problem+json');
  });

  it("a bad or expired bearer token never blocks a payment: it pays and runs once; the payer's valid token then gets the stored answer", async () => {
    const buyer = t.stack.payment.buyers[6];
    const body = walletBalancesRequest(buyer.address);
    // the payment identifier is left out (as read from the chain), so only the bearer token can prove the payer
    const payment = async () => paymentHeader(asReadOnChain(await officialPayload(buyer, await challenge(t.executeUrl, body))));
    const [expiredPaid, malformedPaid] = [await payment(), await payment()];
    const before = await t.usdc(buyer.address);
    const expired = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': expiredPaid, authorization: `Bearer acg_${'x'.repeat(43)}` });
    expect(expired.status, JSON.stringify(expired.body)).toBe(200);
    expect(expired.body.status).toBe('SUCCEEDED');
    const malformed = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': malformedPaid, authorization: 'Basic Zm9vOmJhcg==' });
    expect(malformed.status, JSON.stringify(malformed.body)).toBe(200);
    expect(malformed.body.execution_id).not.toBe(expired.body.execution_id);
    expect(before - (await t.usdc(buyer.address))).toBe(2n * PRICE);
    // resent with the bad token again: no proof of the payer, the receipt only
    const stranger = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': expiredPaid, authorization: `Bearer acg_${'x'.repeat(43)}` });
    expect(stranger.status).toBe(409);
    expect(stranger.body).toMatchObject({ reason: 'payment_already_used', execution_id: expired.body.execution_id });
    expect(stranger.body).not.toHaveProperty('result');
    // resent with the payer's valid token: the stored answer, charged nothing more
    const payer = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': expiredPaid, authorization: `Bearer ${await bearerToken(t.url, buyer)}` });
    expect(payer.status).toBe(200);
    expect(payer.body).toEqual(expired.body);
    expect(before - (await t.usdc(buyer.address))).toBe(2n * PRICE);
  });

  it('concurrent duplicates of one payment run the capability once and charge once', async () => {
    const buyer = t.stack.payment.buyers[4];
    const pr = await challenge(t.executeUrl, walletBalancesRequest(buyer.address));
    const header = paymentHeader(await officialPayload(buyer, pr));
    const before = await t.usdc(buyer.address);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => post(t.executeUrl, walletBalancesRequest(buyer.address), { 'PAYMENT-SIGNATURE': header })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    // every answer is either the one execution or a 409 "in progress": never a second execution
    for (const r of results) expect([200, 409]).toContain(r.status);
    expect(new Set(ok.map((r) => r.body.execution_id)).size).toBe(1);
    expect(before - (await t.usdc(buyer.address))).toBe(PRICE);
  });

  it('honours Idempotency-Key per payer: no payment → 402, a fresh authorization of the payer replays (uncharged), another body is 409', async () => {
    const buyer = t.stack.payment.buyers[5];
    const key = `idem-${Date.now()}`;
    const pr = await challenge(t.executeUrl, walletBalancesRequest(buyer.address));
    const header = paymentHeader(await officialPayload(buyer, pr));
    const before = await t.usdc(buyer.address);
    const first = await post(t.executeUrl, walletBalancesRequest(buyer.address), { 'PAYMENT-SIGNATURE': header, 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    // the key is looked up only once the payment is read: without one, the challenge
    const unpaid = await post(t.executeUrl, walletBalancesRequest(buyer.address), { 'Idempotency-Key': key });
    expect(unpaid.status).toBe(402);
    const again = await post(t.executeUrl, walletBalancesRequest(buyer.address), {
      'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, pr)),
      'Idempotency-Key': key,
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const conflict = await post(t.executeUrl, walletBalancesRequest(t.stack.payment.treasury.address), {
      'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, await challenge(t.executeUrl, walletBalancesRequest(t.stack.payment.treasury.address)))),
      'Idempotency-Key': key,
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.reason).toBe('idempotency_key_conflict');
    expect(before - (await t.usdc(buyer.address))).toBe(PRICE);
  });
});

describe('refused payments cost nothing and say why', () => {
  const cases: [string, (pr: Awaited<ReturnType<typeof challenge>>) => Promise<Awaited<ReturnType<typeof craftPayload>>>, RegExp][] = [
    [
      'forged (signed by another key)',
      (pr) => craftPayload(t.stack.payment.buyers[7], pr.accepts[0], 8453, { from: t.stack.payment.buyers[6].address }),
      /signature/i,
    ],
    ['expired', (pr) => craftPayload(t.stack.payment.buyers[6], pr.accepts[0], 8453, { validBefore: BigInt(Math.floor(Date.now() / 1000) - 60) }), /expired/i],
    ['underpaid', (pr) => craftPayload(t.stack.payment.buyers[6], pr.accepts[0], 8453, { value: PRICE - 1n }), /amount|price/i],
    ['wrong recipient', (pr) => craftPayload(t.stack.payment.buyers[6], pr.accepts[0], 8453, { to: t.stack.payment.buyers[7].address }), /recipient|payTo/i],
    // the challenge says maxTimeoutSeconds 300: an authorization spendable for a year is refused (30 s of clock skew allowed)
    [
      'year-long (validBefore far beyond maxTimeoutSeconds)',
      (pr) => craftPayload(t.stack.payment.buyers[6], pr.accepts[0], 8453, { validBefore: BigInt(Math.floor(Date.now() / 1000) + 365 * 24 * 3600) }),
      /too long|maxTimeoutSeconds/i,
    ],
    [
      'not-yet-valid (validAfter an hour ahead)',
      (pr) =>
        craftPayload(t.stack.payment.buyers[6], pr.accepts[0], 8453, {
          validAfter: BigInt(Math.floor(Date.now() / 1000) + 3600),
          validBefore: BigInt(Math.floor(Date.now() / 1000) + 200),
        }),
      /not valid yet/i,
    ],
  ];
  for (const [name, make, reason] of cases) {
    it(`refuses a ${name} authorization with 402 and a clear reason`, async () => {
      const victim = t.stack.payment.buyers[6].address;
      const before = await t.usdc(victim);
      const pr = await challenge(t.executeUrl, walletBalancesRequest(victim));
      const r = await post(t.executeUrl, walletBalancesRequest(victim), { 'PAYMENT-SIGNATURE': paymentHeader(await make(pr)) });
      expect(r.status).toBe(402);
      expect(r.body.error).toMatch(reason);
      expect(r.body.reason).toMatch(/^[a-z0-9_]+$/);
      expect(r.headers.get('payment-required')).toBeTruthy();
      expect(await t.usdc(victim)).toBe(before);
    });
  }

  it('refuses a validBefore beyond maxTimeoutSeconds with its stable reason, before reserving anything', async () => {
    const victim = t.stack.payment.buyers[6].address;
    const pr = await challenge(t.executeUrl, walletBalancesRequest(victim));
    const now = Math.floor(Date.now() / 1000);
    const inflight = paymentKeys.authorizationsInFlight(t.gateway.services.keys);
    const reservedBefore = await t.gateway.services.redis.zcard(inflight);
    const tooLong = await craftPayload(t.stack.payment.buyers[6], pr.accepts[0], 8453, { validBefore: BigInt(now + pr.accepts[0].maxTimeoutSeconds + 180) });
    const r = await post(t.executeUrl, walletBalancesRequest(victim), { 'PAYMENT-SIGNATURE': paymentHeader(tooLong) });
    expect(r.status).toBe(402);
    expect(r.body.reason).toBe('authorization_validity_too_long');
    const auth = (tooLong.payload as { authorization: { nonce: `0x${string}` } }).authorization;
    expect(
      await t.gateway.services.redis.exists(paymentKeys.authorization(t.gateway.services.keys, 'eip155:8453', t.stack.payment.usdc, victim, auth.nonce)),
    ).toBe(0);
    expect(await t.gateway.services.redis.zcard(inflight)).toBe(reservedBefore);
    // within the window (maxTimeoutSeconds, as the official client signs) is accepted
    const ok = await craftPayload(t.stack.payment.buyers[6], pr.accepts[0], 8453, { validBefore: BigInt(now + pr.accepts[0].maxTimeoutSeconds) });
    expect((await post(t.executeUrl, walletBalancesRequest(victim), { 'PAYMENT-SIGNATURE': paymentHeader(ok) })).status).toBe(200);
  });

  it('refuses a header that is not an x402 payload', async () => {
    const r = await post(t.executeUrl, walletBalancesRequest(t.stack.payment.buyers[6].address), { 'PAYMENT-SIGNATURE': 'not-base64!!' });
    expect(r.status).toBe(402);
    expect(r.body.reason).toBe('invalid_payment_header');
  });
});

describe('bad input costs nothing', () => {
  it('gives 400 problem+json with the failing path, before any payment', async () => {
    const buyer = t.stack.payment.buyers[6];
    const before = await t.usdc(buyer.address);
    const pr = await challenge(t.executeUrl, walletBalancesRequest(buyer.address));
    const header = paymentHeader(await officialPayload(buyer, pr));
    const r = await post(t.executeUrl, { capability_id: 'intelligence.wallet_balances', input: { address: 'nope' } }, { 'PAYMENT-SIGNATURE': header });
    expect(r.status).toBe(400);
    expect(r.contentType).toContain('application/problem+json');
    expect(r.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
    expect(r.body.errors.some((e: { path: unknown[] }) => e.path.join('.') === 'input.address')).toBe(true);
    expect(await t.usdc(buyer.address)).toBe(before);
  });

  it('gives 400 for a body that is not JSON and for a missing capability_id', async () => {
    const raw = await fetch(t.executeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"capability_id":' });
    expect(raw.status).toBe(400);
    expect(raw.headers.get('content-type')).toContain('application/problem+json');
    const missing = await post(t.executeUrl, { input: {} });
    expect(missing.status).toBe(400);
  });

  it('gives 404 for an unknown capability and 422 for one that is not executable', async () => {
    const unknown = await post(t.executeUrl, { capability_id: 'intelligence.nothing_here', input: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain('intelligence.nothing_here');
    const notExecutable = await post(t.executeUrl, { capability_id: 'gateway.registry', input: {} });
    expect(notExecutable.status).toBe(422);
    const planned = await post(t.executeUrl, { capability_id: 'gateway.providers', input: {} });
    expect(planned.status).toBe(422);
    const unconfigured = await post(t.executeUrl, walletBalancesRequest(t.stack.payment.buyers[6].address, 'arbitrum'));
    expect(unconfigured.status).toBe(422);
  });

  it('gives 413 for an oversized body', async () => {
    const r = await fetch(t.executeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pad: 'x'.repeat(1_100_000) }),
    });
    expect(r.status).toBe(413);
  });
});

describe('failure after settlement', () => {
  it('refunds the payer on-chain and records the failed execution', async () => {
    const buyer = t.stack.payment.buyers[7];
    const before = await t.usdc(buyer.address);
    // ethereum is configured to an RPC that refuses connections: the capability fails after payment
    const pr = await challenge(t.executeUrl, walletBalancesRequest(buyer.address, 'ethereum'));
    const r = await post(t.executeUrl, walletBalancesRequest(buyer.address, 'ethereum'), {
      'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, pr)),
    });
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({
      status: 503,
      execution_status: 'FAILED',
      error: { code: 'chain_unavailable' },
      refund: { status: 'pending', amount: '1000' },
    });
    expect(JSON.stringify(r.body)).not.toContain('127.0.0.1:1');
    expect(r.headers.get('payment-response')).toBeTruthy();
    let record: any;
    for (let i = 0; i < 200; i++) {
      record = await readExecution(t.url, r.body.execution_id, buyer);
      if (record.refund?.status === 'sent') break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(record.refund).toMatchObject({ status: 'sent', amount: '1000' });
    expect(record.refund.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await t.usdc(buyer.address)).toBe(before);
  });
});
