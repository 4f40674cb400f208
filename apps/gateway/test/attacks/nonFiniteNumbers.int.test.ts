import { decodePaymentRequiredHeader } from '@x402/core/http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness.js';
import { registerTestProvider, startTestProvider, type TestProvider } from '../providerServer.js';
import { officialPayload, paymentHeader, post, usdcReader } from '../x402.js';

/**
 * Attack (issue 23, item 1): a number literal that does not round-trip (`1e400` → Infinity) in a
 * paid request, or in a provider's answer. Every surface (REST, /trpc, MCP) refuses it before any
 * payment, with a payment attached or not; a provider answering one fails the call: refunded,
 * provider not credited. Money is checked on the chain (payer, treasury) and in the provider
 * ledger. Before the strict parse, the REST body was paid, credited to the provider (held), then
 * refunded after a 500: this file failed on `main` (checked).
 */

let t: TestGateway;
let usdc: (a: `0x${string}`) => Promise<bigint>;
let provider: TestProvider;
let answerRaw = false;
const owner = privateKeyToAccount(generatePrivateKey());
const CAPABILITY = 'intelligence.count_money';

beforeAll(async () => {
  provider = await startTestProvider(() =>
    answerRaw ? { status: 200, rawBody: '{"result":{"n":1e400},"signature":"0x00"}' } : { status: 200, body: { result: { n: 1 } } },
  );
  t = await startTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });
  usdc = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
  await registerTestProvider(t.url, owner, provider, {
    name: 'Count Co',
    capabilities: [
      {
        name: 'count_money',
        description: 'Counts.',
        price_usdc: '0.002',
        input_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
        output_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
        example_request: { n: 1 },
      },
    ],
  });
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

/** On-chain USDC of the payer and the treasury, and the provider ledger's totals. */
async function money() {
  const buyer = t.stack.payment.buyers[0].address;
  const totals = await t.gateway.services.providerLedger.totals();
  return { payer: await usdc(buyer), treasury: await usdc(t.stack.payment.treasury.address), credited: totals.credited, held: totals.held };
}

/** A valid x402 payment for one call of the capability (signed for the finite body's challenge). */
async function validPayment(): Promise<string> {
  const challenge = await post(`${t.url}/api/v1/execute`, { capability_id: CAPABILITY, input: { n: 1 } });
  expect(challenge.status).toBe(402);
  return paymentHeader(await officialPayload(t.stack.payment.buyers[0], decodePaymentRequiredHeader(challenge.headers.get('payment-required')!)));
}

const raw = (url: string, text: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: text });

describe('non-finite numbers are refused before any payment', () => {
  for (const literal of ['1e400', '-1e400', '1e-400', '9007199254740993']) {
    it(`REST POST /api/v1/execute with n = ${literal}, paid: 400 problem+json, no money moves`, async () => {
      const before = await money();
      const res = await raw(`${t.url}/api/v1/execute`, `{"capability_id":"${CAPABILITY}","input":{"n":${literal}}}`, {
        'payment-signature': await validPayment(),
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await res.json()) as { detail: string }).detail).toContain(literal);
      expect(await money()).toEqual(before);
    });
  }

  it('/trpc/execute.execute (body and query) refuses 1e400 with a 400 problem', async () => {
    const before = await money();
    const body = await raw(`${t.url}/trpc/execute.execute`, `{"capability_id":"${CAPABILITY}","input":{"n":1e400}}`, {
      'payment-signature': await validPayment(),
    });
    expect(body.status).toBe(400);
    expect(body.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.stringify(await body.json())).toContain('1e400');
    const query = await fetch(`${t.url}/trpc/execute.getExecution?input=${encodeURIComponent('{"n":1e400}')}`);
    expect(query.status).toBe(400);
    expect(JSON.stringify(await query.json())).toContain('1e400');
    expect(await money()).toEqual(before);
  });

  it('MCP tools/call with 1e400 is JSON-RPC invalid params (-32602), nothing paid', async () => {
    const before = await money();
    const res = await raw(
      `${t.url}/mcp`,
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"intelligence_count_money","arguments":{"n":1e400}}}`,
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32602);
    expect(await money()).toEqual(before);
  });

  it("a provider's answer holding 1e400 fails the call: refunded, provider not credited", async () => {
    answerRaw = true;
    try {
      const before = await money();
      const res = await raw(`${t.url}/api/v1/execute`, `{"capability_id":"${CAPABILITY}","input":{"n":1}}`, { 'payment-signature': await validPayment() });
      expect(res.status).toBe(502);
      const body = (await res.json()) as { execution_id: string; error: { code: string }; refund: { status: string; amount: string } };
      expect(body.error.code).toBe('provider_invalid_output');
      expect(body.refund).toMatchObject({ amount: '2000' });
      expect(await t.gateway.services.providerLedger.entry(body.execution_id)).toBeUndefined();
      // the refund is sent on-chain: the payer and the treasury end where they started, the ledger unchanged
      for (let i = 0; i < 150 && (await usdc(t.stack.payment.buyers[0].address)) !== before.payer; i++) await new Promise((r) => setTimeout(r, 200));
      expect(await money()).toEqual(before);
    } finally {
      answerRaw = false;
    }
  });
});
