import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpTools } from '../src/mcp/tools.js';
import type { OfferScorer } from '@acg/provider-directory';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { succeededExecutionAnswer } from '@acg/execution';
import { readRefund } from '@acg/treasury';
import { parseAbiItem } from 'viem';
import { recoverPayments, startTestGateway, type TestGateway } from './harness.js';
import { waitFor } from './waitFor.js';
import { registerProvider, startTestProvider, upperCaseAnswer, type Answer, type ReceivedCall } from './providerServer.js';
import { officialPayload, paymentHeader, post, readExecution, usdcReader } from './x402.js';

/**
 * Marketplace routing end to end (docs/marketplace.md), on a real anvil payment chain and a
 * private Redis: three providers, each the test's own HTTP server, offer one contract at different
 * prices and speeds. cheapest / fastest / trusted pick the offer they should; with the cheapest
 * down the call succeeds through the next one under one payment, the buyer pays the answering
 * price and gets the rest back on-chain, the failed provider earns nothing and its stats fall.
 */

const ID = 'intelligence.upper_market';
const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
const outputSchema = { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] };
const base = { description: 'Upper-cases text.', input_schema: inputSchema, output_schema: outputSchema, example_request: { text: 'probe' }, timeout_ms: 2000 };

let t: TestGateway;
let usdc: (a: `0x${string}`) => Promise<bigint>;
/** Trust scores the test plugs in (the OfferScorer interface e25trust implements) */
const trust = new Map<string, number>();
const scorer: OfferScorer = { scoreOf: async (providerId) => trust.get(providerId) ?? null };

interface Seller {
  account: ReturnType<typeof privateKeyToAccount>;
  server: Awaited<ReturnType<typeof startTestProvider>>;
  id: string;
  /** how this provider answers now */
  answer: (call: ReceivedCall) => Answer;
}
const sellers: Record<'cheap' | 'fast' | 'dear', Seller> = {} as never;

async function startSeller(delayMs: number): Promise<Seller> {
  const seller = { account: privateKeyToAccount(generatePrivateKey()), id: '' } as Seller;
  seller.answer = (call) => ({ ...(upperCaseAnswer(call) as { status: number; body: unknown }), delayMs });
  seller.server = await startTestProvider((call) => seller.answer(call));
  return seller;
}

async function join(seller: Seller, name: string, offer: Record<string, unknown>) {
  const r = await registerProvider(t.url, seller.account, { name, endpoint: seller.server.url, capabilities: [offer] });
  if (r.status === 201) {
    seller.id = r.body.provider_id;
    seller.server.setSecret(r.body.signing_secret);
    seller.server.signAs(seller.account, [ID]);
  }
  return r;
}

/** Pays `body` at `POST /api/v1/execute` with buyer `index` and returns the answer, the price the 402 asked for and the payment header. */
async function pay(body: Record<string, unknown>, index = 0) {
  const buyer = t.stack.payment.buyers[index];
  const first = await post(`${t.url}/api/v1/execute`, body);
  expect(first.status).toBe(402);
  const required = decodePaymentRequiredHeader(first.headers.get('payment-required')!);
  const header = paymentHeader(await officialPayload(buyer as never, required));
  const r = await post(`${t.url}/api/v1/execute`, body, { 'PAYMENT-SIGNATURE': header });
  return { ...r, asked: BigInt(required.accepts[0].amount), header, buyer };
}

async function registryEntry() {
  t.gateway.services.discovery.invalidate();
  const doc = (await fetch(`${t.url}/registry`).then((r) => r.json())) as { capabilities: Record<string, unknown>[] };
  return doc.capabilities.find((c) => c.id === ID) as Record<string, any>;
}

const balance = (s: Seller) => t.gateway.services.providerMoney!.balance(s.id);
// a probe is sent exactly like a paid call: the test knows it by its input, the contract's example_request
const calls = (s: Seller) => s.server.calls.filter((c) => (c.body.input as { text?: string }).text !== 'probe').length;

beforeAll(async () => {
  sellers.cheap = await startSeller(400);
  sellers.fast = await startSeller(0);
  sellers.dear = await startSeller(150);
  t = await startTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } }, offerScorer: scorer });
  usdc = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
  expect((await join(sellers.cheap, 'Cheap Co', { ...base, name: 'upper_market', price_usdc: '0.001' })).status).toBe(201);
  expect((await join(sellers.fast, 'Fast Co', { ...base, capability_id: ID, price_usdc: '0.002' })).status).toBe(201);
  expect((await join(sellers.dear, 'Dear Co', { ...base, capability_id: ID, price_usdc: '0.003' })).status).toBe(201);
  await t.gateway.services.providers.directory.reload();
  trust.set(sellers.cheap.id, 40).set(sellers.fast.id, 60).set(sellers.dear.id, 90);
});
afterAll(async () => {
  await t?.close();
  for (const s of Object.values(sellers)) await s?.server?.close();
});

describe('contracts with several offers', () => {
  it('refuses a join whose input_schema refuses the contract example_request: 422 contract_mismatch', async () => {
    const misfit = await startSeller(0);
    const r = await join(misfit, 'Misfit Co', {
      ...base,
      capability_id: ID,
      price_usdc: '0.001',
      input_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      example_request: { n: 1 },
    });
    await misfit.server.close();
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('contract_mismatch');
    const unknown = await join(await startSeller(0), 'Lost Co', { ...base, capability_id: 'intelligence.no_such_contract', price_usdc: '0.001' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.reason).toBe('unknown_contract');
  });

  it('/registry lists the contract once with its offers, priced at the lowest live offer', async () => {
    for (const s of Object.values(sellers)) for (let i = 0; i < 3; i++) await t.gateway.prober.probeProvider(s.id);
    const entry = await registryEntry();
    expect(entry.status).toBe('LIVE');
    expect(entry.price).toBe('0.001');
    expect(entry.offers).toHaveLength(3);
    expect(entry.offers.map((o: any) => [o.provider_id, o.price, o.status, o.trust_score])).toEqual([
      [sellers.cheap.id, '0.001', 'live', 40],
      [sellers.fast.id, '0.002', 'live', 60],
      [sellers.dear.id, '0.003', 'live', 90],
    ]);
    expect(entry.offers[0].latency_ms_p50).toBeGreaterThan(entry.offers[1].latency_ms_p50);
  });

  it('the capability page shows the offers side by side from the same registry entry: provider, price, p50/p99, success rate, trust score, status', async () => {
    const entry = await registryEntry();
    const page = await (await fetch(`${t.url}/capabilities/${ID}`, { headers: { accept: 'text/html' } })).text();
    const table = page.match(/<table data-offers>[\s\S]*?<\/table>/)?.[0] ?? '';
    expect(table).toContain('<th scope="col">Success rate</th><th scope="col">Trust score</th><th scope="col">Status</th>');
    const rows = [...table.matchAll(/<tr data-offer="(prv_[0-9A-Z]+)">([\s\S]*?)<\/tr>/g)].map((m) => [
      m[1],
      m[2]
        .replace(/<[^>]+>/g, '')
        .split('\n')
        .filter(Boolean),
    ]);
    const ms = (v: number | null) => (v === null ? '—' : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);
    const rate = (v: number | null) => (v === null ? '—' : `${(v * 100).toFixed(1)} %`);
    expect(rows).toEqual(
      entry.offers.map((o: any) => [
        o.provider_id,
        [
          `${o.provider} ${o.provider_id}`,
          `${o.price} USDC`,
          ms(o.latency_ms_p50),
          ms(o.latency_ms_p99),
          rate(o.success_rate),
          String(o.trust_score),
          o.status,
        ],
      ]),
    );
    expect(rows.map(([id, cells]) => [id, cells[1], cells[5], cells[6]])).toEqual([
      [sellers.cheap.id, '0.001 USDC', '40', 'live'],
      [sellers.fast.id, '0.002 USDC', '60', 'live'],
      [sellers.dear.id, '0.003 USDC', '90', 'live'],
    ]);
    // the MCP paid tool of the contract lists its offers (provider, id, price); a built-in's does not
    const tools = new McpTools(t.gateway.services.catalog);
    const description = tools.list().find((tool) => tool.title === ID)?.description ?? '';
    expect(description).toContain(
      `Offers: Cheap Co (${sellers.cheap.id}) 0.001 USDC; Fast Co (${sellers.fast.id}) 0.002 USDC; Dear Co (${sellers.dear.id}) 0.003 USDC.`,
    );
    expect(tools.list().find((tool) => tool.title === 'intelligence.wallet_balances')?.description).not.toContain('Offers:');
    // a built-in has no offers table
    const builtIn = await (await fetch(`${t.url}/capabilities/gateway.execute`, { headers: { accept: 'text/html' } })).text();
    expect(builtIn).not.toContain('data-offers');
  });
});

describe('routing with failover under one payment', () => {
  it('cheapest, fastest and trusted each pick their offer; the 402 asks the highest price of the route', async () => {
    const cases = [
      ['cheapest', sellers.cheap],
      ['fastest', sellers.fast],
      ['trusted', sellers.dear],
    ] as const;
    for (const [prefer, expected] of cases) {
      const r = await pay({ capability_id: ID, input: { text: prefer }, routing: { prefer } });
      expect(r.status).toBe(200);
      expect(r.asked).toBe(3000n);
      expect(r.body.provider).toEqual({ provider_id: expected.id, name: expect.any(String) });
      expect(r.body.attempts).toEqual([{ provider_id: expected.id, outcome: 'succeeded', latency_ms: expect.any(Number) }]);
      expect(r.body.result).toEqual({ upper: prefer.toUpperCase() });
    }
    const capped = await pay({ capability_id: ID, input: { text: 'cap' }, routing: { prefer: 'trusted', max_price_usdc: '0.002' } });
    expect(capped.asked).toBe(2000n);
    expect(capped.body.provider.provider_id).toBe(sellers.fast.id);
  });

  it('refuses before payment when no offer fits: all excluded, or all over max_price', async () => {
    const excluded = await post(`${t.url}/api/v1/execute`, {
      capability_id: ID,
      input: { text: 'x' },
      routing: { exclude: [sellers.cheap.id, sellers.fast.id, sellers.dear.id] },
    });
    expect(excluded.status).toBe(422);
    expect(excluded.contentType).toMatch(/application\/problem\+json/);
    expect(excluded.body).toMatchObject({ reason: 'no_route', cause: 'excluded' });
    const tooDear = await post(`${t.url}/api/v1/execute`, { capability_id: ID, input: { text: 'x' }, routing: { max_price_usdc: '0.0005' } });
    expect(tooDear.body).toMatchObject({ reason: 'no_route', cause: 'over_max_price' });
  });

  it('with the cheapest provider down, the next answers under the same payment; the buyer pays its price and gets the rest back on-chain', async () => {
    sellers.cheap.answer = () => ({ status: 500, body: { detail: 'down' } });
    const [cheapBefore, fastBefore, buyerBefore, treasuryBefore] = await Promise.all([
      balance(sellers.cheap),
      balance(sellers.fast),
      usdc(t.stack.payment.buyers[1].address),
      usdc(t.stack.payment.treasury.address),
    ]);
    const [statsBefore] = await t.gateway.services.providers.stats.read([{ capabilityId: ID, providerId: sellers.cheap.id }]);
    const cheapCalls = calls(sellers.cheap);
    const r = await pay({ capability_id: ID, input: { text: 'failover' }, routing: { prefer: 'cheapest' } }, 1);
    expect(r.status).toBe(200);
    // the 402 asked the highest price of the route (dear 0.003); fast answered at 0.002
    expect(r.asked).toBe(3000n);
    expect(r.body.payment.amount).toBe('3000');
    expect(r.body.provider.provider_id).toBe(sellers.fast.id);
    expect(r.body.attempts.map((a: any) => [a.provider_id, a.outcome])).toEqual([
      [sellers.cheap.id, 'failed'],
      [sellers.fast.id, 'succeeded'],
    ]);
    expect(calls(sellers.cheap)).toBe(cheapCalls + 1);
    expect(r.body.refund).toEqual({ status: 'pending', amount: '1000' });
    // on-chain: the buyer paid 0.003 and got 0.001 back; the treasury keeps 0.002
    await waitFor(
      () => usdc(t.stack.payment.buyers[1].address),
      (b) => buyerBefore - b === 2000n,
    );
    expect((await usdc(t.stack.payment.treasury.address)) - treasuryBefore).toBe(2000n);
    // only the answering provider is credited (its share of 0.002 after the fee); the failed one earns nothing
    const [cheapAfter, fastAfter] = await Promise.all([balance(sellers.cheap), balance(sellers.fast)]);
    expect(cheapAfter).toEqual(cheapBefore);
    expect(BigInt(fastAfter.held) - BigInt(fastBefore.held)).toBe(1800n);
    const [statsAfter] = await t.gateway.services.providers.stats.read([{ capabilityId: ID, providerId: sellers.cheap.id }]);
    expect(statsAfter.failures).toBe(statsBefore.failures + 1);
    expect(statsAfter.success_rate!).toBeLessThan(statsBefore.success_rate ?? 1);
  });
});

describe('attacks on the routed payment', () => {
  it('a replay of the same payment gets the stored answer: no second provider call, no second charge', async () => {
    sellers.cheap.answer = (call) => upperCaseAnswer(call);
    const callsBefore = Object.values(sellers).map(calls);
    const buyer = t.stack.payment.buyers[2].address;
    const before = await usdc(buyer);
    const body = { capability_id: ID, input: { text: 'replay' }, routing: { prefer: 'fastest' } };
    const r = await pay(body, 2);
    expect(r.status).toBe(200);
    const again = await post(`${t.url}/api/v1/execute`, body, { 'PAYMENT-SIGNATURE': r.header });
    expect(again.status).toBe(200);
    expect(again.body.execution_id).toBe(r.body.execution_id);
    expect(
      Object.values(sellers)
        .map(calls)
        .reduce((a, b) => a + b) - callsBefore.reduce((a, b) => a + b),
    ).toBe(1);
    // asked 0.003, answered by fast at 0.002: 0.001 back, once
    await waitFor(
      () => usdc(buyer),
      (b) => before - b === 2000n,
    );
  });

  it('duplicate concurrent calls with one payment run once and credit once', async () => {
    const buyer = t.stack.payment.buyers[3];
    const body = { capability_id: ID, input: { text: 'dup' }, routing: { prefer: 'trusted' } };
    const first = await post(`${t.url}/api/v1/execute`, body);
    const header = paymentHeader(await officialPayload(buyer as never, decodePaymentRequiredHeader(first.headers.get('payment-required')!)));
    const dearBefore = await balance(sellers.dear);
    const callsBefore = calls(sellers.dear);
    const before = await usdc(buyer.address);
    const answers = await Promise.all([0, 1, 2].map(() => post(`${t.url}/api/v1/execute`, body, { 'PAYMENT-SIGNATURE': header })));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((a) => a.body.execution_id)).size).toBe(1);
    expect(calls(sellers.dear)).toBe(callsBefore + 1);
    expect(BigInt((await balance(sellers.dear)).held) - BigInt(dearBefore.held)).toBe(2700n);
    expect(before - (await usdc(buyer.address))).toBe(3000n);
  });

  it("a provider answering with another provider's signature earns nothing; the next offer answers", async () => {
    // dear signs its results with cheap's key: not its registered address
    sellers.dear.server.signAs(sellers.cheap.account, [ID]);
    const [dearBefore, fastBefore] = await Promise.all([balance(sellers.dear), balance(sellers.fast)]);
    const buyer = t.stack.payment.buyers[4].address;
    const before = await usdc(buyer);
    const r = await pay({ capability_id: ID, input: { text: 'forged' }, routing: { prefer: 'trusted', exclude: [sellers.cheap.id] } }, 4);
    expect(r.status).toBe(200);
    expect(r.body.attempts.map((a: any) => [a.provider_id, a.outcome])).toEqual([
      [sellers.dear.id, 'invalid_signature'],
      [sellers.fast.id, 'succeeded'],
    ]);
    expect(await balance(sellers.dear)).toEqual(dearBefore);
    expect(BigInt((await balance(sellers.fast)).held) - BigInt(fastBefore.held)).toBe(1800n);
    await waitFor(
      () => usdc(buyer),
      (b) => before - b === 2000n,
    );
    sellers.dear.server.signAs(sellers.dear.account, [ID]);
  });

  it('an offer whose probe output fails the contract output_schema is never routed to', async () => {
    const wrong = await startSeller(0);
    wrong.answer = () => ({ status: 200, body: { result: { shout: 'X' } } });
    const r = await join(wrong, 'Wrong Co', { ...base, capability_id: ID, price_usdc: '0.0001', output_schema: { type: 'object' } });
    expect(r.status).toBe(201);
    await t.gateway.services.providers.directory.reload();
    await t.gateway.prober.probeProvider(wrong.id);
    const entry = await registryEntry();
    expect(entry.offers.find((o: any) => o.provider_id === wrong.id).status).toBe('down');
    expect(entry.status).toBe('LIVE');
    const only = await post(`${t.url}/api/v1/execute`, { capability_id: ID, input: { text: 'x' }, routing: { providers: [wrong.id] } });
    expect(only.status).toBe(422);
    expect(only.body).toMatchObject({ reason: 'no_route', cause: 'excluded' });
    await wrong.server.close();
  });
});

describe('a crash after the routed call succeeded, before its partial refund was queued (issue 33)', () => {
  it('the sweep completes the payment with refund, provider and attempts, and refunds the difference exactly once', { timeout: 120_000 }, async () => {
    const { services } = t.gateway;
    sellers.fast.answer = (call) => upperCaseAnswer(call);
    for (const s of Object.values(sellers)) await t.gateway.prober.probeProvider(s.id);
    const buyer = t.stack.payment.buyers[6];
    const before = await usdc(buyer.address);
    const fromBlock = await services.paymentClient.getBlockNumber();
    const body = { capability_id: ID, input: { text: 'crash' }, routing: { prefer: 'fastest' } };
    const first = await post(`${t.url}/api/v1/execute`, body);
    const header = paymentHeader(await officialPayload(buyer as never, decodePaymentRequiredHeader(first.headers.get('payment-required')!)));
    // the process dies at the refund enqueue: the SUCCEEDED record is stored, the refund never queued
    const enqueue = services.refunds.enqueue;
    let died!: () => void;
    const dead = new Promise<void>((r) => {
      died = r;
    });
    services.refunds.enqueue = () => {
      died();
      return new Promise<void>(() => undefined);
    };
    const aborted = new AbortController();
    const request = fetch(`${t.url}/api/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'PAYMENT-SIGNATURE': header },
      body: JSON.stringify(body),
      signal: aborted.signal,
    }).catch(() => undefined);
    await dead;
    services.refunds.enqueue = enqueue;
    aborted.abort();
    await request;

    // the worker's sweep, twice (a second round, or a second worker, changes nothing)
    const finishedAnswer = (op: string) => succeededExecutionAnswer(services.executions, op);
    const round = await recoverPayments(t, { olderThanMs: 0, finishedAnswer });
    expect(round.completed).toHaveLength(1);
    expect(round.refunded).toHaveLength(0);
    expect((await recoverPayments(t, { olderThanMs: 0, finishedAnswer })).completed).toHaveLength(0);
    const executionId = round.completed[0];

    // the replay gets the answer the original would have given: provider, attempts and the refund
    const replay = await post(`${t.url}/api/v1/execute`, body, { 'PAYMENT-SIGNATURE': header });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    expect(replay.body).toMatchObject({
      execution_id: executionId,
      status: 'SUCCEEDED',
      result: { upper: 'CRASH' },
      provider: { provider_id: sellers.fast.id },
      attempts: [{ provider_id: sellers.fast.id, outcome: 'succeeded' }],
      refund: { amount: '1000' },
    });
    // on-chain: paid 0.003, got 0.001 back once; the ledger's refund record says sent
    await waitFor(
      () => readRefund(services.redis, services.keys, executionId),
      (r) => r?.status === 'sent',
    );
    expect(before - (await usdc(buyer.address))).toBe(2000n);
    const refunds = await services.paymentClient.getLogs({
      address: t.stack.payment.usdc,
      event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
      args: { from: t.stack.payment.treasury.address, to: buyer.address },
      fromBlock,
    });
    expect(refunds.map((l) => l.args.value)).toEqual([1000n]);
    const record = await readExecution(t.url, executionId, buyer as never);
    expect(record).toMatchObject({ status: 'SUCCEEDED', refund: { status: 'sent', amount: '1000' } });
  });
});
