import { afterEach, describe, expect, it, vi } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';
import { challenge, officialPayload, paymentHeader, post, walletBalancesRequest } from '../x402.js';

// issue 33 ("The chain is the ledger of record"), item 6: two availability faults of the same round.
const t = useTestGateway();

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the gateway's clock 45 s behind its payers", () => {
  it('accepts a payment signed by the official x402 client with its default window, and settles it', { timeout: 60_000 }, async () => {
    const buyer = t.stack.payment.buyers[7];
    const body = walletBalancesRequest(buyer.address);
    const required = await challenge(t.executeUrl, body);
    // the payer's clock is 45 s ahead: validBefore = its now + maxTimeoutSeconds (the client's default)
    const real = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => real() + 45_000);
    const payload = await officialPayload(buyer, required);
    vi.restoreAllMocks();
    const auth = (payload.payload as { authorization: { validBefore: string } }).authorization;
    expect(Number(auth.validBefore)).toBeGreaterThan(Math.floor(Date.now() / 1000) + required.accepts[0].maxTimeoutSeconds + 30);
    const before = await t.usdc(buyer.address);
    const r = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await t.usdc(buyer.address)).toBe(before - BigInt(required.accepts[0].amount));
  });
});

describe('a stored provider probe with status 0', () => {
  it('cannot make /registry or /status/health fail: it reads as 599 (no answer)', { timeout: 60_000 }, async () => {
    const { services } = t.gateway;
    // as an older release stored a probe that got no HTTP answer
    const stored = {
      ok: false,
      checked_at: new Date().toISOString(),
      probe: { url: `${t.url}/registry`, method: 'GET', status: 0, body_sha256: 'e'.repeat(64) },
    };
    await services.redis.hset(services.keys.probes(), 'gateway.registry', JSON.stringify(stored));
    services.discovery.invalidate();
    const registry = await fetch(`${t.url}/registry`);
    expect(registry.status).toBe(200);
    const health = await fetch(`${t.url}/status/health`);
    expect(health.status).toBe(200);
    expect((await services.probes.all())['gateway.registry'].probe.status).toBe(599);
    const catalog = (await (await fetch(`${t.url}/gateway-catalog.json`)).json()) as { capabilities: { id: string; status: string }[] };
    const entry = catalog.capabilities.find((c) => c.id === 'gateway.registry');
    expect(entry?.status).not.toBe('LIVE');
  });
});
