import { startLiquidationIndexer, type LiquidationIndexer } from '@acg/liquidations';
import { LiquidationSearchResponse } from '@acg/schemas';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayClient } from '../../../packages/sdk/src/client.js';
import { createLiquidationsClient } from '../../../packages/sdk/src/liquidations.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { Scrape } from '../../../packages/observability/test/prometheus.js';
import { officialPayload, paymentHeader, post } from './x402.js';
import { lendingIndexerConfig, setupLendingDevnet, startAnvil, type AnvilInstance, type LendingDevnet } from '@acg/devnet';

/**
 * GET /v1/liquidation-search and `mev.liquidation_search` through /api/v1/execute on a real gateway
 * (payment chain 8453 with real USDC) whose Redis holds the index of a lending dev chain (chain id 1).
 */
let gw: TestGateway;
let anvil: AnvilInstance;
let dev: LendingDevnet;
let indexer: LiquidationIndexer;
let url: string;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 });
  // the gateway reads the chain head for the liquidation index lag metric (ETHEREUM_RPC_URL)
  gw = await startTestGateway({ prober: false, config: { chains: { ethereum: anvil.rpcUrl } } });
  dev = await setupLendingDevnet(anvil.rpcUrl);
  indexer = await startLiquidationIndexer({
    chain: 'ethereum',
    rpcUrl: anvil.rpcUrl,
    redis: gw.stack.redis.url,
    keyPrefix: gw.config.keyPrefix,
    pollIntervalMs: 100,
    ...lendingIndexerConfig(dev.deployment),
  });
  url = `${gw.url}/v1/liquidation-search`;
});

afterAll(async () => {
  await indexer?.stop();
  await gw?.close();
  await anvil?.stop();
});

const get = async (query: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${url}${query}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, contentType: res.headers.get('content-type') };
};

describe('GET /v1/liquidation-search', () => {
  it.each([
    ['?limit=abc', 'limit'],
    ['?limit=501', 'limit'],
    ['?max_health_factor=1.5', 'max_health_factor'],
    ['?min_profit_usd=-1', 'min_profit_usd'],
    ['?protocol=aave_v2', 'protocol'],
    ['?chain=solana', 'chain'],
    ['?min_profit=100', ''],
  ])('answers 400 problem+json for %s, before any payment', async (query, field) => {
    const r = await get(query);
    expect(r.status).toBe(400);
    expect(r.contentType).toMatch(/application\/problem\+json/);
    expect(r.body).toMatchObject({ status: 400, title: 'Bad Request' });
    if (field) expect(JSON.stringify(r.body.errors)).toContain(field);
  });

  it('answers 402 with the x402 challenge (0.02 USDC) without payment or bearer', async () => {
    const r = await get('?min_profit_usd=0&chain=ethereum');
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ scheme: 'exact', network: 'eip155:8453', maxAmountRequired: '20000', x402Version: 2 });
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.accepts[0].amount).toBe('20000');
  });

  it('answers 401 for an invalid bearer token', async () => {
    const r = await get('', { authorization: 'Bearer not-a-token' });
    expect(r.status).toBe(401);
    expect(r.contentType).toMatch(/application\/problem\+json/);
  });

  it('serves the index when paid with x402 (one settlement of 20000 base units)', async () => {
    const first = await get('?max_health_factor=1.1&limit=100');
    const pr = decodePaymentRequiredHeader(first.headers.get('payment-required')!);
    const payload = await officialPayload(gw.stack.payment.buyers[0], pr);
    const r = await get('?max_health_factor=1.1&limit=100', { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const body = LiquidationSearchResponse.parse(r.body);
    expect(body.chain).toBe('ethereum');
    expect(body.block_number).toBeGreaterThan(0);
    expect(body.opportunities.length).toBe(dev.positions.filter((p) => p.label !== 'healthy').length);
    const profits = body.opportunities.map((o) => o.estimated_profit_usd);
    expect(profits).toEqual([...profits].sort((a, b) => b - a));
    expect(r.headers.get('payment-response')).toBeTruthy();
  });
});

describe('mev.liquidation_search through POST /api/v1/execute', () => {
  it('is executable, validates input before payment, and returns the same result shape', async () => {
    const bad = await post(`${gw.url}/api/v1/execute`, { capability_id: 'mev.liquidation_search', input: { limit: 0 } });
    expect(bad.status).toBe(400);
    const request = { capability_id: 'mev.liquidation_search', input: { min_profit_usd: 0, protocol: ['compound_v3'] } };
    const unpaid = await post(`${gw.url}/api/v1/execute`, request);
    expect(unpaid.status).toBe(402);
    const pr = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const payload = await officialPayload(gw.stack.payment.buyers[1], pr);
    const r = await post(`${gw.url}/api/v1/execute`, request, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.status).toBe('SUCCEEDED');
    expect(r.body.payment.amount).toBe('20000');
    const result = LiquidationSearchResponse.parse(r.body.result);
    expect(result.opportunities.length).toBeGreaterThan(0);
    for (const o of result.opportunities) {
      expect(o.protocol).toBe('compound_v3');
      expect(o.health_factor).toBeLessThan(1);
    }
  });
});

describe('SDK liquidations.search', () => {
  it('pays the 402 with x402 and returns the filtered, sorted opportunities', async () => {
    const liq = createLiquidationsClient({ baseUrl: gw.url, account: gw.stack.payment.buyers[2] });
    const r = await liq.search({ protocol: ['aave_v3', 'spark'], max_health_factor: 1.1, limit: 5 });
    expect(r.opportunities.length).toBeGreaterThan(0);
    expect(r.opportunities.length).toBeLessThanOrEqual(5);
    for (const o of r.opportunities) expect(['aave_v3', 'spark']).toContain(o.protocol);
    await expect(createLiquidationsClient({ baseUrl: gw.url }).search()).rejects.toThrow(/payment/i);
  });

  it('keeps paying per call after a paid execute brought a sign-in-with-x session (no metered debit)', async () => {
    const buyer = gw.stack.payment.buyers[3];
    const client = createGatewayClient({ baseUrl: gw.url, account: buyer });
    await client.execute('intelligence.wallet_balances', { address: buyer.address });
    // the paid answer signed the payer in: the session reads the payer's results ...
    expect(client.auth.token()?.address).toBe(buyer.address);
    // ... but the search is not debited from the (empty) metered account: it pays 0.02 USDC with x402
    const r = await client.liquidations.search({ max_health_factor: 1.1, limit: 2 });
    expect(r.opportunities.length).toBeGreaterThan(0);
    expect(client.spent().baseUnits).toBe(1_000n + 20_000n);
  });
});

describe('GET /metrics', () => {
  it('exports the liquidation index lag (chain head − indexed block) and age per chain, read at scrape time', async () => {
    const head = await indexer.indexNow();
    const scrape = async () => new Scrape(await (await fetch(`${gw.url}/metrics`)).text());
    const s = await scrape();
    expect(s.sample('acg_liquidation_index_lag_blocks', { chain: 'ethereum' })).toBeDefined();
    expect(s.value('acg_liquidation_index_lag_blocks', { chain: 'ethereum' })).toBeGreaterThanOrEqual(0);
    expect(s.value('acg_liquidation_index_age_seconds', { chain: 'ethereum' })).toBeGreaterThanOrEqual(0);
    // three blocks the stopped indexer has not seen: the lag shows them
    await indexer.stop();
    for (let i = 0; i < 3; i++)
      await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"evm_mine","params":[]}',
      });
    const lagged = await scrape();
    expect(lagged.value('acg_liquidation_index_lag_blocks', { chain: 'ethereum' })).toBeGreaterThanOrEqual(3);
    expect(Number(head)).toBeGreaterThan(0);
    // chains without an index are absent
    expect(lagged.sample('acg_liquidation_index_lag_blocks', { chain: 'arbitrum' })).toBeUndefined();
  });
});
