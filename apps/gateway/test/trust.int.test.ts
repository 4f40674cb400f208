import { QuoteStore } from '@acg/provider-directory';
import { AttestationPayload, ProviderView, Quote } from '@acg/schemas';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { useRegisteredProvider } from './useRegisteredProvider.js';
import { upperCaseAnswer, upperCaseCapability, type Answer, type ReceivedCall, type TestProvider } from './providerServer.js';
import { bearerToken, challenge, officialPayload, paidPost, paymentHeader, post } from './x402.js';

/**
 * Trust scores, attestations, suspension, dispute-hold tiers and quotes (issue 25 items 3-5;
 * packages/provider-directory README "Trust scores", apps/gateway README "Quotes"), on real anvil and Redis,
 * with the test's own provider servers.
 */

const ADMIN_TOKEN = `admin-${'t'.repeat(32)}`;
const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' }, adminToken: ADMIN_TOKEN } });
let jwks: ReturnType<typeof createLocalJWKSet>;

/** The flaky provider: answers valid results, or results its output schema refuses, as the test says. */
let mode: 'good' | 'bad' = 'good';
const flakyAnswer = (call: ReceivedCall): Answer => (mode === 'good' ? upperCaseAnswer(call) : { status: 200, body: { result: { upper: 42 } } });
const flaky = useRegisteredProvider(t, flakyAnswer, { name: 'Flaky Co', capabilities: [upperCaseCapability('upper_flaky', '0.01')] });
const FLAKY = 'intelligence.upper_flaky';

const quoted = useRegisteredProvider(t, upperCaseAnswer, { name: 'Quoted Co', capabilities: [upperCaseCapability('upper_quoted', '0.5')] });
const QUOTED = 'intelligence.upper_quoted';

/** Paid executions of the flaky offer that failed (refunded), counted by the test. */
let failedExecutions = 0;

beforeAll(async () => {
  jwks = createLocalJWKSet((await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet);
});

/** A paid execute through the official x402 client (`@x402/fetch`) by buyer `buyer`. */
const pay = (body: Record<string, unknown>, buyer = 0) => paidPost(t.stack.payment.buyers[buyer], `${t.url}/api/v1/execute`, body);

async function probe(providerId: string) {
  await t.gateway.services.providers.probe!(providerId);
}

async function dashboard(providerId: string, owner: typeof flaky.owner) {
  const res = await fetch(`${t.url}/api/v1/providers/${providerId}`, { headers: { authorization: `Bearer ${await bearerToken(t.url, owner)}` } });
  expect(res.status).toBe(200);
  return ProviderView.parse(await res.json());
}

async function verifiedAttestation(providerId: string) {
  const r = await fetch(`${t.url}/api/v1/providers/${providerId}/attestation`);
  expect(r.status).toBe(200);
  const { attestation } = (await r.json()) as { attestation: string };
  const verified = await compactVerify(attestation, jwks);
  expect(verified.protectedHeader).toMatchObject({ alg: 'EdDSA', typ: 'acg-attestation+jws' });
  return AttestationPayload.parse(JSON.parse(new TextDecoder().decode(verified.payload)));
}

/** A probe looks like a paid call on the wire (docs/trust-v1.md "Probes"); the test knows it by its input, the contract's example_request. */
const isProbe = (c: ReceivedCall) => (c.body.input as { text?: string }).text === 'probe';
const executionsOf = (server: TestProvider) => server.calls.filter((c) => c.verified && !isProbe(c)).length;
const probesOf = (server: TestProvider) => server.calls.filter((c) => c.verified && isProbe(c)).length;

describe('suspension and attestation', () => {
  it('suspends an offer whose answers fail its output schema, keeps probing it, and routes it again once its probes pass', async () => {
    await probe(flaky.id);
    expect((await pay({ capability_id: FLAKY, input: { text: 'ok' } })).body.status).toBe('SUCCEEDED');

    mode = 'bad';
    let suspended = false;
    let failed = 0;
    failedExecutions = 0;
    for (let i = 0; i < 6 && !suspended; i++) {
      const r = await pay({ capability_id: FLAKY, input: { text: `bad ${i}` } });
      expect(r.status).toBe(502);
      expect(r.body.error?.code ?? r.body.error).toBeTruthy();
      failed++;
      failedExecutions++;
      suspended = (await t.gateway.services.providers.trust.suspension(flaky.id, FLAKY)) !== null;
    }
    expect(suspended).toBe(true);
    expect(failed).toBeLessThanOrEqual(3);

    // not routed: refused before any payment (no 402, nothing to pay)
    const refused = await post(`${t.url}/api/v1/execute`, { capability_id: FLAKY, input: { text: 'x' } });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ reason: 'offer_suspended', provider_id: flaky.id });
    expect(refused.headers.get('payment-required')).toBeNull();

    // the provider sees why on its dashboard
    const view = await dashboard(flaky.id, flaky.owner);
    const trust = view.capabilities[0].trust!;
    expect(trust.suspended?.reason).toMatch(/under the routing threshold 50/);
    expect(trust.score).toBeLessThan(50);
    expect(trust.counts.invalid_outputs).toBe(failed);

    // still probed; a failing probe does not bring it back
    await probe(flaky.id);
    expect((await t.gateway.services.providers.trust.suspension(flaky.id, FLAKY))?.passing_probes).toBe(0);

    mode = 'good';
    await probe(flaky.id);
    await probe(flaky.id);
    expect((await t.gateway.services.providers.trust.suspension(flaky.id, FLAKY))?.passing_probes).toBe(2);
    // three passing probes are needed, and a score back at the threshold: a probe weighs a quarter of a paid call
    let probes = 2;
    while ((await t.gateway.services.providers.trust.suspension(flaky.id, FLAKY)) !== null && probes < 20) {
      await probe(flaky.id);
      probes++;
    }
    expect(probes).toBeGreaterThanOrEqual(3);
    expect(await t.gateway.services.providers.trust.suspension(flaky.id, FLAKY)).toBeNull();
    expect((await dashboard(flaky.id, flaky.owner)).capabilities[0].trust?.score).toBeGreaterThanOrEqual(50);
    expect((await dashboard(flaky.id, flaky.owner)).capabilities[0].trust?.suspended).toBeNull();
    expect((await pay({ capability_id: FLAKY, input: { text: 'back' } })).body.status).toBe('SUCCEEDED');
  });

  it('signs the scores with the receipt key: the attestation verifies with jose against the JWKS and counts the calls the provider received', async () => {
    const a = await verifiedAttestation(flaky.id);
    expect(a).toMatchObject({ provider_id: flaky.id, address: flaky.owner.address, formula: 'trust-v2' });
    const s = a.scores.find((x) => x.capability_id === FLAKY)!;
    expect(s.counts.executions).toBe(executionsOf(flaky.server));
    expect(s.counts.probes).toBe(probesOf(flaky.server));
    // the failed paid executions of the first test, and its one failed probe: all invalid outputs
    expect(s.counts.execution_failures).toBe(failedExecutions);
    expect(s.counts.probe_failures).toBe(1);
    expect(s.counts.invalid_outputs).toBe(failedExecutions + 1);
    expect(s.score).toBeGreaterThanOrEqual(0);
    expect(s.score).toBeLessThanOrEqual(100);

    // altered: the signature no longer verifies
    const { attestation } = (await (await fetch(`${t.url}/api/v1/providers/${flaky.id}/attestation`)).json()) as { attestation: string };
    const [h, , sig] = attestation.split('.');
    const forged = Buffer.from(JSON.stringify({ ...a, scores: a.scores.map((x) => ({ ...x, score: 100 })) })).toString('base64url');
    await expect(compactVerify(`${h}.${forged}.${sig}`, jwks)).rejects.toThrow();
    expect((await fetch(`${t.url}/api/v1/providers/prv_00000000000000000000000000/attestation`)).status).toBe(404);
  });

  it('publishes the formula on /llms.txt and on the capability page, with the offer score', async () => {
    const llms = await (await fetch(`${t.url}/llms.txt`)).text();
    expect(llms).toContain('Trust score formula trust-v2');
    expect(llms).toContain('routing threshold 50');
    const page = await (await fetch(`${t.url}/capabilities/${FLAKY}`, { headers: { accept: 'text/html' } })).text();
    expect(page).toContain('data-trust-formula');
    const a = await verifiedAttestation(flaky.id);
    expect(page).toContain(`data-trust-score="${a.scores[0].score}"`);
  });
});

describe('quotes', () => {
  let clock = Date.now();
  beforeAll(() => {
    // quotes on a clock the test moves (the quote's lifetime without waiting for it)
    t.gateway.services.providers.quotes = new QuoteStore(t.gateway.services.redis, t.gateway.services.keys, () => clock);
  });

  async function quote(input: Record<string, unknown>) {
    const r = await post(`${t.url}/api/v1/quotes`, { capability_id: QUOTED, input });
    expect(r.status).toBe(201);
    return Quote.parse(r.body);
  }

  /** Changes the quoted provider's price through the public API (PUT with a fresh signed challenge). */
  async function reprice(price: string) {
    const body = { name: 'Quoted Co', endpoint: quoted.server.url, capabilities: [upperCaseCapability('upper_quoted', price)] };
    const c = await post(`${t.url}/api/v1/providers/challenge`, { address: quoted.owner.address, action: 'update', provider_id: quoted.id, ...body });
    expect(c.status).toBe(200);
    const res = await fetch(`${t.url}/api/v1/providers/${quoted.id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        address: quoted.owner.address,
        message: c.body.message,
        signature: await quoted.owner.signMessage({ message: c.body.message }),
        ...body,
      }),
    });
    expect(res.status).toBe(200);
    quoted.server.setSecret(((await res.json()) as { signing_secret: string }).signing_secret);
  }

  it('holds the quoted price for its lifetime, runs once on the quoted provider, and refuses the quote after it', async () => {
    const q = await quote({ text: 'quoted' });
    expect(q).toMatchObject({ capability_id: QUOTED, provider_id: quoted.id, price: '0.5', price_base_units: '500000', currency: 'USDC' });
    expect(Date.parse(q.expires_at) - clock).toBe(t.config.providers.quoteTtlSeconds * 1000);
    const verified = await compactVerify(q.quote, jwks);
    const { quote: _jws, ...fields } = q;
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual(fields);

    // the price goes up; the quote's price holds
    await reprice('0.9');
    const unquoted = await challenge(`${t.url}/api/v1/execute`, { capability_id: QUOTED, input: { text: 'quoted' } });
    expect(unquoted.accepts[0].amount).toBe('900000');
    const body = { capability_id: QUOTED, input: { text: 'quoted' }, quote_id: q.quote_id };
    const asked = await challenge(`${t.url}/api/v1/execute`, body);
    expect(asked.accepts[0].amount).toBe('500000');

    clock += (t.config.providers.quoteTtlSeconds - 1) * 1000; // still live
    const buyer = t.stack.payment.buyers[1];
    const before = await t.usdc(buyer.address);
    const header = paymentHeader(await officialPayload(buyer, asked));
    const paid = await fetch(`${t.url}/api/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': header },
      body: JSON.stringify(body),
    });
    const out = (await paid.json()) as any;
    expect(out).toMatchObject({ status: 'SUCCEEDED', result: { upper: 'QUOTED' }, payment: { amount: '500000' } });
    expect(await t.usdc(buyer.address)).toBe(before - 500_000n);
    expect(quoted.server.calls.filter((c) => c.body.execution_id === out.execution_id)).toHaveLength(1);

    // replay of the same payment: the stored execution, no second charge, no second run
    const again = await fetch(`${t.url}/api/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': header },
      body: JSON.stringify(body),
    });
    expect(again.status).toBe(200);
    expect(((await again.json()) as any).execution_id).toBe(out.execution_id);
    // reuse with a new payment: refused before any payment
    const reuse = await post(`${t.url}/api/v1/execute`, body);
    expect(reuse.status).toBe(409);
    expect(reuse.body.reason).toBe('quote_used');
    expect(await t.usdc(buyer.address)).toBe(before - 500_000n);
    expect(quoted.server.calls.filter((c) => c.body.input && (c.body.input as { text: string }).text === 'quoted')).toHaveLength(1);

    // after its lifetime: 410
    const late = await quote({ text: 'late' });
    clock = Date.parse(late.expires_at);
    const expired = await post(`${t.url}/api/v1/execute`, { capability_id: QUOTED, input: { text: 'late' }, quote_id: late.quote_id });
    expect(expired.status).toBe(410);
    expect(expired.body.reason).toBe('quote_expired');
  });

  it('refuses a quote with another input, an unknown or forged quote id, and an altered quote JWS', async () => {
    const q = await quote({ text: 'mine' });
    const other = await post(`${t.url}/api/v1/execute`, { capability_id: QUOTED, input: { text: 'yours' }, quote_id: q.quote_id });
    expect(other.status).toBe(409);
    expect(other.body.reason).toBe('quote_input_mismatch');
    const unknown = await post(`${t.url}/api/v1/execute`, { capability_id: QUOTED, input: { text: 'mine' }, quote_id: 'qte_00000000000000000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.reason).toBe('quote_not_found');
    // an altered quote (a lower price) no longer verifies against the JWKS, and the gateway prices from its own record anyway
    const [h, p, sig] = q.quote.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    const altered = Buffer.from(JSON.stringify({ ...payload, price: '0.000001', price_base_units: '1' })).toString('base64url');
    await expect(compactVerify(`${h}.${altered}.${sig}`, jwks)).rejects.toThrow();
    const asked = await challenge(`${t.url}/api/v1/execute`, { capability_id: QUOTED, input: { text: 'mine' }, quote_id: q.quote_id });
    expect(asked.accepts[0].amount).toBe(q.price_base_units);
  });
});

describe('dispute-hold tiers', () => {
  it('holds a new provider twice the dispute window, and three times once it lost a dispute', async () => {
    const window = t.config.providers.disputeWindowSeconds;
    const ledger = t.gateway.services.providerLedger;
    const buyer = t.stack.payment.buyers[2];
    const holdOf = async (executionId: string) => {
      const e = (await ledger.entry(executionId))!;
      return (Date.parse(e.matures_at) - Date.parse(e.credited_at)) / 1000;
    };
    const first = await pay({ capability_id: QUOTED, input: { text: 'tier one' } }, 2);
    expect(first.body.status).toBe('SUCCEEDED');
    expect(await holdOf(first.body.execution_id)).toBe(2 * window);
    expect((await dashboard(quoted.id, quoted.owner)).capabilities[0].trust).toMatchObject({ tier: 'new', hold_seconds: 2 * window });

    const token = await bearerToken(t.url, buyer);
    const opened = await post(`${t.url}/api/v1/executions/${first.body.execution_id}/dispute`, { reason: 'wrong' }, { authorization: `Bearer ${token}` });
    expect(opened.status).toBe(201);
    const lost = await post(`${t.url}/api/v1/disputes/${opened.body.dispute_id}/resolve`, { outcome: 'refund' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(lost.status).toBe(200);

    const second = await pay({ capability_id: QUOTED, input: { text: 'tier two' } }, 2);
    expect(second.body.status).toBe('SUCCEEDED');
    expect(await holdOf(second.body.execution_id)).toBe(3 * window);
    const a = await verifiedAttestation(quoted.id);
    expect(a.scores[0].counts).toMatchObject({ disputes_opened: 1, disputes_lost: 1 });
  });
});
