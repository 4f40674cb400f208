import { gatewayJobs } from '@acg/capabilities';
import { LiquidationIndexStore } from '@acg/liquidations';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec, type DiscoveryExtension } from '@x402/extensions/bazaar';
import {
  appendPaymentIdentifierToExtensions,
  generatePaymentId,
  isPaymentIdentifierExtension,
  validatePaymentIdentifier,
} from '@x402/extensions/payment-identifier';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { officialPayload, paymentHeader, post, walletBalancesRequest } from './x402.js';

/**
 * x402 extensions on every REST 402 (docs/decisions.md "Agents: MCP and x402 extensions"): `bazaar`
 * (checked with @x402/extensions' own validators) and `payment-identifier` (advertised, and
 * honoured: same id + same payload → stored response, same id + another payload → 409), on real
 * anvil and Redis. The MCP side is in mcp.int.test.ts.
 */

const t = useTestGateway();
const PRICE = 1000n;

beforeAll(async () => {
  const { redis, keys } = t.gateway.services;
  await new LiquidationIndexStore(redis, keys, 'ethereum').writeBlock(
    { block_number: 1, block_timestamp: Math.floor(Date.now() / 1000), base_fee_wei: '1000000000', eth_usd: 3000, updated_at: new Date().toISOString() },
    {},
    [],
  );
});

/** A bearer token of buyer `index` (Sign-In with Ethereum). */
async function signIn(index: number): Promise<string> {
  const account = t.stack.payment.buyers[index];
  const nonce = await post(`${t.url}/v1/auth/nonce`, { address: account.address });
  const token = await post(`${t.url}/v1/auth/token`, { message: nonce.body.message, signature: await account.signMessage({ message: nonce.body.message }) });
  return token.body.access_token;
}

/** Checks one 402: header and body carry the same extensions, bazaar valid per @x402/extensions, payment-identifier declared. */
function expectExtensions(res: { status: number; headers: Headers; body: Record<string, any> }, method: string): DiscoveryExtension {
  expect(res.status).toBe(402);
  const header = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
  expect(res.body.extensions).toEqual(header.extensions);
  const bazaar = header.extensions!.bazaar as DiscoveryExtension;
  expect(validateDiscoveryExtension(bazaar), JSON.stringify(validateDiscoveryExtension(bazaar).errors)).toEqual({ valid: true });
  expect(validateDiscoveryExtensionSpec(bazaar as unknown as Record<string, unknown>)).toEqual({ valid: true });
  expect(bazaar.info.input).toMatchObject({ type: 'http', method });
  expect(bazaar.info.output).toMatchObject({ type: 'json' });
  const pid = header.extensions!['payment-identifier'];
  expect(isPaymentIdentifierExtension(pid)).toBe(true);
  expect(validatePaymentIdentifier(pid)).toEqual({ valid: true });
  expect(pid).toMatchObject({ info: { required: false } });
  return bazaar;
}

const get = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
};

describe('extensions.bazaar on every 402', () => {
  it('POST /api/v1/execute declares the named capability: body {capability_id, input} and its result schema', async () => {
    const bazaar = expectExtensions(await post(t.executeUrl, walletBalancesRequest(t.stack.payment.buyers[0].address)), 'POST');
    const info = bazaar.info as { input: { bodyType: string; body: Record<string, any> }; output: { example: Record<string, any> } };
    expect(info.input.bodyType).toBe('json');
    expect(info.input.body.capability_id).toBe('intelligence.wallet_balances');
    const schema = bazaar.schema.properties.input.properties as Record<string, any>;
    expect(schema.body.properties.capability_id.const).toBe('intelligence.wallet_balances');
    expect(schema.body.properties.input.properties).toHaveProperty('address');
    expect(info.output.example.result).toHaveProperty('usdc');
    // another capability, another declaration
    const liq = expectExtensions(await post(t.executeUrl, { capability_id: 'mev.liquidation_search', input: { chain: 'ethereum' } }), 'POST');
    expect((liq.schema.properties.input.properties as Record<string, any>).body.properties.input.properties).toHaveProperty('min_profit_usd');
  });

  it('POST /api/v1/jobs, POST /v1/account/deposit and GET /v1/liquidation-search (x402 and an empty bearer account)', async () => {
    const jobs = expectExtensions(await post(`${t.url}/api/v1/jobs`, gatewayJobs.example.request), 'POST');
    expect((jobs.info.input as { body: unknown }).body).toEqual(gatewayJobs.example.request);
    expectExtensions(await post(`${t.url}/v1/account/deposit`, { amount_usdc: '2' }), 'POST');
    const search = expectExtensions(await get(`${t.url}/v1/liquidation-search?chain=ethereum`), 'GET');
    expect((search.info.input as { queryParams: unknown }).queryParams).toMatchObject({ chain: 'ethereum' });
    const token = await signIn(0);
    const empty = await get(`${t.url}/v1/liquidation-search?chain=ethereum`, { authorization: `Bearer ${token}` });
    expect(empty.body.deposit).toBeDefined();
    expectExtensions(empty, 'GET');
  });

  it('a refused payment is a 402 with the extensions too', async () => {
    const r = await post(t.executeUrl, walletBalancesRequest(t.stack.payment.buyers[0].address), { 'PAYMENT-SIGNATURE': 'not-base64!!' });
    expect(r.body.reason).toBe('invalid_payment_header');
    expectExtensions(r, 'POST');
  });
});

describe('payment-identifier', () => {
  /** The 402 of `body` at `url` with `id` appended to its extensions, as a client does before signing. */
  async function withIdentifier(url: string, body: unknown, id: string): Promise<PaymentRequired> {
    const r = await post(url, body);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    appendPaymentIdentifierToExtensions(pr.extensions!, id);
    return pr;
  }

  it('on execute: same id + same payload → the stored execution; same id + another payload → 409; charged once', async () => {
    const buyer = t.stack.payment.buyers[1];
    const url = t.executeUrl;
    const body = walletBalancesRequest(buyer.address);
    const id = generatePaymentId();
    const pr = await withIdentifier(url, body, id);
    const payload = await officialPayload(buyer, pr);
    expect(payload.extensions?.['payment-identifier']).toMatchObject({ info: { id } });
    const before = await t.usdc(buyer.address);
    const first = await post(url, body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(first.status).toBe(200);
    const again = await post(url, body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // re-signed (a new nonce) under the same id: another payload
    const conflict = await post(url, body, { 'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, pr)) });
    expect(conflict.status).toBe(409);
    expect(conflict.contentType).toContain('application/problem+json');
    expect(conflict.body).toMatchObject({ status: 409, reason: 'payment_identifier_conflict' });
    expect(before - (await t.usdc(buyer.address))).toBe(PRICE);
    // the conflict was refused before anything was reserved or settled: a new id pays normally
    const fresh = await post(url, body, {
      'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, await withIdentifier(url, body, generatePaymentId()))),
    });
    expect(fresh.status).toBe(200);
    expect(fresh.body.execution_id).not.toBe(first.body.execution_id);
    expect(before - (await t.usdc(buyer.address))).toBe(2n * PRICE);
  });

  it('is honoured on every paid route (deposit, jobs): a reused id with another payload is 409, nothing charged twice', async () => {
    const buyer = t.stack.payment.buyers[2];
    const before = await t.usdc(buyer.address);
    for (const [url, body] of [
      [`${t.url}/v1/account/deposit`, { amount_usdc: '0.01' }],
      [`${t.url}/api/v1/jobs`, { ...(gatewayJobs.example.request as object), budget_usdc: 0.002 }],
    ] as const) {
      const id = generatePaymentId();
      const pr = await withIdentifier(url, body, id);
      const first = await post(url, body, { 'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, pr)) });
      expect(first.status, url).toBeLessThan(300);
      const conflict = await post(url, body, { 'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, pr)) });
      expect(conflict.status, url).toBe(409);
      expect(conflict.body.reason).toBe('payment_identifier_conflict');
    }
    // the job refunds its unspent budget later; at most the two payments left the wallet
    expect(before - (await t.usdc(buyer.address))).toBeLessThanOrEqual(10_000n + 2_000n);
  });

  it('refuses a malformed identifier with 402 invalid_payment_identifier, before any charge', async () => {
    const buyer = t.stack.payment.buyers[3];
    const url = t.executeUrl;
    const body = walletBalancesRequest(buyer.address);
    const r = await post(url, body);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    pr.extensions = { ...pr.extensions, 'payment-identifier': { info: { required: false, id: 'short' } } };
    const before = await t.usdc(buyer.address);
    const refused = await post(url, body, { 'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, pr)) });
    expect(refused.status).toBe(402);
    expect(refused.body.reason).toBe('invalid_payment_identifier');
    expect(await t.usdc(buyer.address)).toBe(before);
  });
});
