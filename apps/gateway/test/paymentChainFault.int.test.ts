import { PaymentChainUnavailableError, requestHash } from '@acg/payments';
import { afterEach, describe, expect, it } from 'vitest';
import { paywallWithSettle, startTestGateway, type TestGateway } from './harness.js';
import { challenge, officialPayload, paymentHeader, post } from './x402.js';
import { paymentKeys } from '@acg/payments/commands';

// The payment chain's node dies (SIGKILL of its anvil): paid calls must answer 503 with
// Retry-After quickly, charge nothing (or keep the reservation recoverable), and health must say so.
// Each test kills its own chain, so each starts its own stack.

/** Generous bound that only detects a hang (the facilitator used to poll for 70 s and more). */
const HANG_MS = 45_000;

let t: TestGateway | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function killPaymentChain(gw: TestGateway): Promise<void> {
  process.kill(gw.stack.payment.anvil.pid, 'SIGKILL');
  // wait until the port refuses connections
  for (let i = 0; i < 100; i++) {
    const up = await fetch(gw.stack.payment.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
    }).then(
      () => true,
      () => false,
    );
    if (!up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('anvil did not die');
}

type Health = { capabilities: { id: string; status: string }[] };

const within = <T>(p: Promise<T>, ms: number): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms (hang)`)), ms))]);

describe('payment chain unreachable', () => {
  it('a paid execute and a paid job get 503 problem+json with Retry-After, nothing is reserved, and health shows execute down', {
    timeout: 120_000,
  }, async () => {
    t = await startTestGateway();
    const { services } = t.gateway;
    const buyer = t.stack.payment.buyers[0];
    const executeUrl = `${t.url}/api/v1/execute`;
    const body = { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } };
    const jobBody = {
      objective: 'chain fault',
      budget_usdc: 0.002,
      capabilities: ['intelligence.wallet_balances'],
      steps: [{ capability_id: 'intelligence.wallet_balances', input: { address: buyer.address } }],
    };
    // valid payments, signed while the chain is up
    const header = paymentHeader(await officialPayload(buyer, await challenge(executeUrl, body)));
    const jobHeader = paymentHeader(await officialPayload(t.stack.payment.buyers[1], await challenge(`${t.url}/api/v1/jobs`, jobBody)));
    const healthBefore = (await fetch(`${t.url}/status/health`).then((r) => r.json())) as Health;
    expect(healthBefore.capabilities.find((c) => c.id === 'gateway.execute')?.status).toBe('up');

    await killPaymentChain(t);

    const r = await within(post(executeUrl, body, { 'PAYMENT-SIGNATURE': header }), HANG_MS);
    expect(r.status).toBe(503);
    expect(r.contentType).toMatch(/application\/problem\+json/);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(r.body).toMatchObject({ status: 503, reason: 'payment_chain_unavailable', payment: { status: 'not_charged' } });
    expect(JSON.stringify(r.body)).not.toMatch(/signature|simulation|127\.0\.0\.1|fetch failed/i);

    const j = await within(post(`${t.url}/api/v1/jobs`, jobBody, { 'PAYMENT-SIGNATURE': jobHeader }), HANG_MS);
    expect(j.status).toBe(503);
    expect(j.headers.get('retry-after')).toBeTruthy();
    expect(j.body).toMatchObject({ reason: 'payment_chain_unavailable' });

    // nothing reserved or settled: the payments were refused before any reservation
    expect(await services.redis.zcard(paymentKeys.authorizationsInFlight(services.keys))).toBe(0);
    expect(await services.redis.keys(`${services.keys.prefix}pay:auth:*`)).toEqual([]);

    const health = (await fetch(`${t.url}/status/health`).then((r) => r.json())) as Health;
    const status = (id: string) => health.capabilities.find((c) => c.id === id)?.status;
    expect(['down', 'degraded']).toContain(status('gateway.execute'));
    expect(['down', 'degraded']).toContain(status('gateway.jobs'));
  });

  it('the chain dying between verify and settle: 503 with payment status unknown, the reservation kept for reconciliation, a replay never blames the payment', {
    timeout: 120_000,
  }, async () => {
    t = await startTestGateway();
    const gw = t;
    const { services } = gw.gateway;
    const buyer = gw.stack.payment.buyers[2];
    // deterministic: verify runs against the live chain, then the node is SIGKILLed right before settlement
    const paywall = paywallWithSettle(gw, async (inner, p, r) => {
      await killPaymentChain(gw);
      return inner.settle(p, r);
    });
    const executeUrl = `${gw.url}/api/v1/execute`;
    const body = { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } };
    const header = paymentHeader(await officialPayload(buyer, await challenge(executeUrl, body)));
    const req = {
      resourceUrl: executeUrl,
      description: 'Execute intelligence.wallet_balances',
      price: 1000n,
      route: 'execute',
      requestHash: requestHash('POST', 'execute', body),
      operationId: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S9A',
      getHeader: (name: string) => (name === 'payment-signature' ? header : undefined),
      // the payer retries (its bearer token's wallet): a stranger resending the payment gets the receipt only
      payerAccount: async () => buyer.address,
    };
    let ran = false;
    const run = async () => {
      ran = true;
      return { ok: true as const, body: {} };
    };
    const first = await within(
      paywall.handle(req, run).then(
        (v) => v,
        (e: unknown) => e,
      ),
      HANG_MS,
    );
    expect(first).toBeInstanceOf(PaymentChainUnavailableError);
    expect((first as PaymentChainUnavailableError).payment).toBe('unknown');
    expect(ran).toBe(false);
    const [authKey] = await services.redis.zrange(paymentKeys.authorizationsInFlight(services.keys), '0', '-1');
    // kept for the recovery sweep / a replay to reconcile against authorizationState
    expect(await services.redis.hget(authKey, 'state')).toBe('settle_unknown');
    expect(await services.redis.hget(authKey, 'operation_id')).toBe(req.operationId);

    // a replay while the chain is still gone: 503 unknown again, never a 402 about the signature
    const replay = await within(
      paywall.handle({ ...req, operationId: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S9B' }, run).catch((e: unknown) => e),
      HANG_MS,
    );
    expect(replay).toBeInstanceOf(PaymentChainUnavailableError);
    expect((replay as PaymentChainUnavailableError).payment).toBe('unknown');
    expect(ran).toBe(false);
  });
});
