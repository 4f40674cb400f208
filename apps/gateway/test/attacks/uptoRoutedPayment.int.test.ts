import { usdcAbi } from '@acg/devnet';
import { PERMIT2_ADDRESS } from '@acg/devnet';
import { permit2NonceHex, requestHash, uptoPermit2Authorization } from '@acg/payments';
import { paymentKeys, transitionAuthorization } from '@acg/payments/commands';
import type { OfferScorer } from '@acg/provider-directory';
import { permit2NonceUsed, readRefund } from '@acg/treasury';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { toClientEvmSigner, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { createPublicClient, createWalletClient, http, maxUint256, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverPayments, startTestGateway, type TestGateway } from '../harness.js';
import { registerProvider, startTestProvider, upperCaseAnswer, type Answer, type ReceivedCall } from '../providerServer.js';
import { waitFor } from '../waitFor.js';
import { paymentHeader, post, usdcReader } from '../x402.js';

/**
 * x402 `upto` on a routed call (docs/decisions.md "Payment schemes"), as an attacker would try it,
 * on a real anvil payment chain (our x402UptoPermit2Proxy and Permit2) and a private Redis, paid by
 * the official `@x402/evm` upto client, unchanged: three providers offer one contract at 0.001,
 * 0.002 and 0.003 USDC; the 402 offers `exact` first and `upto` with the route's highest price as
 * its ceiling; a call on `upto` settles only the answering offer's price (no refund transaction).
 * A replay, a duplicate in flight, a reordered pair and a crash between the run and the
 * settlement each leave the buyer, the treasury and the provider ledger adding up. The same on the
 * contract's MCP tool, called with the official MCP client (x402 transports-v2/mcp.md).
 */

const ID = 'intelligence.upper_market';
const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
const outputSchema = { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] };
const base = { description: 'Upper-cases text.', input_schema: inputSchema, output_schema: outputSchema, example_request: { text: 'probe' }, timeout_ms: 2000 };

let t: TestGateway;
let usdc: (a: `0x${string}`) => Promise<bigint>;
const trust = new Map<string, number>();
const scorer: OfferScorer = { scoreOf: async (providerId) => trust.get(providerId) ?? null };

interface Seller {
  account: LocalAccount;
  server: Awaited<ReturnType<typeof startTestProvider>>;
  id: string;
  answer: (call: ReceivedCall) => Answer;
}
const sellers: Record<'cheap' | 'mid' | 'dear', Seller> = {} as never;

async function startSeller(): Promise<Seller> {
  const seller = { account: privateKeyToAccount(generatePrivateKey()), id: '' } as Seller;
  seller.answer = (call) => upperCaseAnswer(call);
  seller.server = await startTestProvider((call) => seller.answer(call));
  return seller;
}

/** Registers `seller` offering the contract at `price`; the first one creates it (`name`), the others join it (`capability_id`). */
async function join(seller: Seller, name: string, price: string, first = false): Promise<void> {
  const offer = first ? { ...base, name: 'upper_market', price_usdc: price } : { ...base, capability_id: ID, price_usdc: price };
  const r = await registerProvider(t.url, seller.account, { name, endpoint: seller.server.url, capabilities: [offer] });
  expect(r.status).toBe(201);
  seller.id = r.body.provider_id;
  seller.server.setSecret(r.body.signing_secret);
  seller.server.signAs(seller.account, [ID]);
}

const calls = (s: Seller) => s.server.calls.filter((c) => (c.body.input as { text?: string }).text !== 'probe').length;
const held = async (s: Seller) => BigInt((await t.gateway.services.providerMoney!.balance(s.id)).held);
const executeUrl = () => `${t.url}/api/v1/execute`;
const routedBody = (text: string) => ({ capability_id: ID, input: { text }, routing: { prefer: 'cheapest' } });

/** The buyer lets Permit2 move its USDC (once), as an `upto` payer must (x402 `upto` EVM: Permit2 allowance). */
async function approvePermit2(buyer: LocalAccount): Promise<void> {
  const pay = t.stack.payment;
  const wallet = createWalletClient({ account: buyer, chain: pay.chain, transport: http(pay.rpcUrl) });
  const hash = await wallet.writeContract({ address: pay.usdc, abi: usdcAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] });
  await createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) }).waitForTransactionReceipt({ hash });
}

/** The 402 of `body` (its PAYMENT-REQUIRED) and an `upto` PaymentPayload the official @x402/evm upto client signs for it. */
async function uptoPayload(buyer: LocalAccount, body: unknown): Promise<{ required: PaymentRequired; payload: PaymentPayload }> {
  const first = await post(executeUrl(), body);
  expect(first.status).toBe(402);
  const required = decodePaymentRequiredHeader(first.headers.get('payment-required')!);
  const client = new x402Client().register('eip155:*', new UptoEvmScheme(toClientEvmSigner(buyer as never)));
  return { required, payload: await client.createPaymentPayload(required) };
}

/** The buyer's and treasury's USDC, the cheap provider's held ledger balance and its calls, before a payment. */
async function snapshot(buyer: LocalAccount) {
  const [buyerUsdc, treasuryUsdc, cheapHeld, cheapCalls] = await Promise.all([
    usdc(buyer.address),
    usdc(t.stack.payment.treasury.address),
    held(sellers.cheap),
    calls(sellers.cheap),
  ]);
  return { buyerUsdc, treasuryUsdc, cheapHeld, cheapCalls };
}

/** A 402 of the three-offer route: `exact` first and `upto` with the route's highest price (0.003) as ceiling; the client signed `upto`. */
function expectRouteCeilingOffer(required: PaymentRequired, payload: PaymentPayload): void {
  expect(required.accepts.map((a) => [a.scheme, a.amount])).toEqual([
    ['exact', '3000'],
    ['upto', '3000'],
  ]);
  expect(required.accepts[1].extra).toMatchObject({ assetTransferMethod: 'permit2', facilitatorAddress: t.stack.payment.facilitator.address });
  expect(payload.accepted.scheme).toBe('upto');
}

/**
 * Since `before`, the cheap offer answered once and `payload` was settled once for its price
 * (0.001 of the 0.003 authorized) through the upto proxy in `txHash`, nothing else: the buyer,
 * the treasury and the provider ledger (its 90% share) add up; no refund; the ledger entry and the
 * execution record name the settlement.
 */
async function expectSettledAnsweringPrice(
  buyer: LocalAccount,
  before: Awaited<ReturnType<typeof snapshot>>,
  payload: PaymentPayload,
  executionId: string,
  txHash: `0x${string}`,
) {
  const receipt = await createPublicClient({ transport: http(t.stack.payment.rpcUrl) }).getTransactionReceipt({ hash: txHash });
  expect(receipt.to?.toLowerCase()).toBe(x402UptoPermit2ProxyAddress.toLowerCase());
  expect(before.buyerUsdc - (await usdc(buyer.address))).toBe(1000n);
  expect((await usdc(t.stack.payment.treasury.address)) - before.treasuryUsdc).toBe(1000n);
  expect(await readRefund(t.gateway.services.redis, t.gateway.services.keys, executionId)).toBeUndefined();
  const permit = uptoPermit2Authorization(payload)!.authorization;
  expect(await permit2NonceUsed(t.gateway.services.paymentClient, buyer.address, BigInt(permit.nonce))).toBe(true);
  // the ledger: the answering provider's share of 0.001 (after the 10% fee), once
  expect((await held(sellers.cheap)) - before.cheapHeld).toBe(900n);
  expect(calls(sellers.cheap)).toBe(before.cheapCalls + 1);
  // the provider's credit names the upto settlement that paid it (not the `0x` of a payment not yet settled)
  expect((await t.gateway.services.providerLedger.entry(executionId))?.payment_tx_hash).toBe(txHash);
  // the execution record names the settlement
  expect((await t.gateway.services.executions.get(executionId))?.payment).toMatchObject({ amount: '1000', tx_hash: txHash });
}

/** Since `before`, one run and one settlement of the answering price (0.001): the buyer, the treasury and the provider ledger. */
async function expectOneRunOneSettlement(buyer: LocalAccount, before: Awaited<ReturnType<typeof snapshot>>) {
  expect(calls(sellers.cheap)).toBe(before.cheapCalls + 1);
  expect(before.buyerUsdc - (await usdc(buyer.address))).toBe(1000n);
  expect((await usdc(t.stack.payment.treasury.address)) - before.treasuryUsdc).toBe(1000n);
  expect((await held(sellers.cheap)) - before.cheapHeld).toBe(900n);
}

/** `payload` with its ceiling raised to 0.002999 (the same Permit2 nonce, a signature that no longer matches). */
function raisedCeiling(payload: PaymentPayload): PaymentPayload {
  const forged = structuredClone(payload);
  (forged.payload as { permit2Authorization: { permitted: { amount: string } } }).permit2Authorization.permitted.amount = '2999';
  return forged;
}

const mcpClients: Client[] = [];

/** The official MCP client, connected to the gateway's MCP endpoint. */
async function mcpClient(): Promise<Client> {
  const client = new Client({ name: 'acg-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
  mcpClients.push(client);
  return client;
}

/** The contract's MCP tool called with `text` and the cheapest routing in `_meta.routing`, with the PaymentPayload in `_meta["x402/payment"]` when given. */
async function callUpperTool(mcp: Client, text: string, payment?: PaymentPayload): Promise<CallToolResult> {
  return (await mcp.callTool({
    name: 'intelligence_upper_market',
    arguments: { text },
    _meta: { routing: { prefer: 'cheapest' }, ...(payment ? { 'x402/payment': payment } : {}) },
  })) as CallToolResult;
}

/** The problem+json an MCP tool error carries as its text. */
const problemOf = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text) as Record<string, unknown>;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  sellers.cheap = await startSeller();
  sellers.mid = await startSeller();
  sellers.dear = await startSeller();
  t = await startTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } }, offerScorer: scorer });
  usdc = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
  await join(sellers.cheap, 'Cheap Co', '0.001', true);
  await join(sellers.mid, 'Mid Co', '0.002');
  await join(sellers.dear, 'Dear Co', '0.003');
  await t.gateway.services.providers.directory.reload();
  for (const s of Object.values(sellers)) for (let i = 0; i < 3; i++) await t.gateway.prober.probeProvider(s.id);
  for (const buyer of t.stack.payment.buyers.slice(2, 8)) await approvePermit2(buyer);
});
afterAll(async () => {
  for (const c of mcpClients) await c.close().catch(() => undefined);
  await t?.close();
  for (const s of Object.values(sellers)) await s?.server?.close();
});

describe('upto on a routed call', () => {
  it('the 402 offers exact first and upto with the route ceiling; a call on upto settles exactly the answering price, with no refund transaction', async () => {
    const buyer = t.stack.payment.buyers[3];
    const body = routedBody('upto');
    const { required, payload } = await uptoPayload(buyer, body);
    expectRouteCeilingOffer(required, payload);
    const before = await snapshot(buyer);

    const r = await post(executeUrl(), body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(r.status).toBe(200);
    expect(r.body.provider.provider_id).toBe(sellers.cheap.id);
    expect(r.body.payment).toMatchObject({ amount: '1000', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(r.body.refund).toBeUndefined();
    const settlement = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(settlement).toMatchObject({ success: true, amount: '1000', transaction: r.body.payment.tx_hash });
    // on chain: one settlement through the upto proxy for 0.001 of the 0.003 authorized, nothing else
    await expectSettledAnsweringPrice(buyer, before, payload, r.body.execution_id, r.body.payment.tx_hash);
  });

  it('a replay and a duplicate in flight run once and settle once; the authorization is never spent twice', async () => {
    const buyer = t.stack.payment.buyers[4];
    const body = routedBody('dup');
    const { payload } = await uptoPayload(buyer, body);
    const header = paymentHeader(payload);
    const before = await snapshot(buyer);
    // the same payment twice at once, then once more after
    const [a, b] = await Promise.all([post(executeUrl(), body, { 'PAYMENT-SIGNATURE': header }), post(executeUrl(), body, { 'PAYMENT-SIGNATURE': header })]);
    const replay = await post(executeUrl(), body, { 'PAYMENT-SIGNATURE': header });
    const statuses = [a.status, b.status, replay.status];
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    // every other answer is the stored one or the receipt (409 payment_already_used): never a second run
    for (const r of [a, b, replay]) if (r.status !== 200) expect(r.body.reason).toBe('payment_already_used');
    await expectOneRunOneSettlement(buyer, before);

    // the same Permit2 nonce in another payload (a raised ceiling) is refused before anything runs
    const refused = await post(executeUrl(), body, { 'PAYMENT-SIGNATURE': paymentHeader(raisedCeiling(payload)) });
    expect(refused.status).toBe(402);
    expect(calls(sellers.cheap)).toBe(before.cheapCalls + 1);
    expect(before.buyerUsdc - (await usdc(buyer.address))).toBe(1000n);
  });

  it('a reordered pair of payments: each runs once and settles its own answering price', async () => {
    const buyer = t.stack.payment.buyers[5];
    const first = await uptoPayload(buyer, routedBody('first'));
    const second = await uptoPayload(buyer, routedBody('second'));
    const [buyerBefore, treasuryBefore, cheapCalls] = await Promise.all([usdc(buyer.address), usdc(t.stack.payment.treasury.address), calls(sellers.cheap)]);
    // signed in one order, sent in the other
    const r2 = await post(executeUrl(), routedBody('second'), { 'PAYMENT-SIGNATURE': paymentHeader(second.payload) });
    const r1 = await post(executeUrl(), routedBody('first'), { 'PAYMENT-SIGNATURE': paymentHeader(first.payload) });
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect([r1.body.result, r2.body.result]).toEqual([{ upper: 'FIRST' }, { upper: 'SECOND' }]);
    expect(r1.body.payment.tx_hash).not.toBe(r2.body.payment.tx_hash);
    expect(calls(sellers.cheap)).toBe(cheapCalls + 2);
    expect(buyerBefore - (await usdc(buyer.address))).toBe(2000n);
    expect((await usdc(t.stack.payment.treasury.address)) - treasuryBefore).toBe(2000n);
    // each one's payload sent again to the other's body is a conflict, never a run
    const swapped = await post(executeUrl(), routedBody('second'), { 'PAYMENT-SIGNATURE': paymentHeader(first.payload) });
    expect(swapped.status).toBe(409);
    expect(calls(sellers.cheap)).toBe(cheapCalls + 2);
  });
});

describe('upto on a quoted call', () => {
  it('settles exactly the quoted price, once, with no refund; the quote then refuses another payment before it is settled', async () => {
    const buyer = t.stack.payment.buyers[7];
    const input = { text: 'quoted' };
    const q = await post(`${t.url}/api/v1/quotes`, { capability_id: ID, input, routing: { prefer: 'cheapest' } });
    expect(q.status).toBe(201);
    expect(q.body).toMatchObject({ provider_id: sellers.cheap.id, price_base_units: '1000' });
    const body = { capability_id: ID, input, quote_id: q.body.quote_id };
    const { required, payload } = await uptoPayload(buyer, body);
    expect(required.accepts.map((a) => [a.scheme, a.amount])).toEqual([
      ['exact', '1000'],
      ['upto', '1000'],
    ]);
    const [buyerBefore, treasuryBefore, cheapCalls] = await Promise.all([usdc(buyer.address), usdc(t.stack.payment.treasury.address), calls(sellers.cheap)]);
    const r = await post(executeUrl(), body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(r.status).toBe(200);
    expect(r.body.payment.amount).toBe('1000');
    expect(r.body.refund).toBeUndefined();
    expect(buyerBefore - (await usdc(buyer.address))).toBe(1000n);
    expect((await usdc(t.stack.payment.treasury.address)) - treasuryBefore).toBe(1000n);
    expect(await readRefund(t.gateway.services.redis, t.gateway.services.keys, r.body.execution_id)).toBeUndefined();
    // a second upto payment naming the used quote is refused before anything is settled or run
    const again = await uptoPayload(buyer, { capability_id: ID, input, routing: { prefer: 'cheapest' } });
    const refused = await post(executeUrl(), body, { 'PAYMENT-SIGNATURE': paymentHeader(again.payload) });
    expect(refused.status).toBe(409);
    expect(refused.body.reason).toBe('quote_used');
    expect(calls(sellers.cheap)).toBe(cheapCalls + 1);
    expect(buyerBefore - (await usdc(buyer.address))).toBe(1000n);
  });
});

describe('a crash between the run and the settlement', () => {
  /** Decides a routed call's upto payment on the gateway's paywall, as the edge does, and returns the deferred settled step (the run is the test's). */
  async function reserved(buyer: LocalAccount, text: string, operationId: string) {
    const body = routedBody(text);
    const { payload } = await uptoPayload(buyer, body);
    const { services } = t.gateway;
    const decision = await services.paywall.decide({
      resourceUrl: executeUrl(),
      description: `Execute ${ID}`,
      price: 3000n,
      schemes: ['exact', 'upto'],
      route: 'execute',
      requestHash: requestHash('POST', 'execute', body),
      operationId,
      paymentPayload: payload,
    });
    expect(decision.kind).toBe('proceed');
    if (decision.kind !== 'proceed') throw new Error('not proceeding');
    expect(decision.plan.deferred).toBe(true);
    const settled = await decision.plan.settlement;
    expect(settled.kind).toBe('settled');
    const permit = uptoPermit2Authorization(payload)!.authorization;
    const authKey = paymentKeys.authorization(services.keys, t.stack.payment.network, PERMIT2_ADDRESS, buyer.address, permit2NonceHex(permit.nonce));
    return { payload, authKey, nonce: BigInt(permit.nonce) };
  }

  it('after the amount to settle was recorded: the deferred recovery settles it once, and the sweep refunds what was never answered', async () => {
    const buyer = t.stack.payment.buyers[6];
    const { services } = t.gateway;
    const operationId = 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7U01';
    const [buyerBefore, treasuryBefore] = await Promise.all([usdc(buyer.address), usdc(t.stack.payment.treasury.address)]);
    const { payload, authKey, nonce } = await reserved(buyer, 'crash', operationId);
    expect(await services.redis.hget(authKey, 'state')).toBe('pending');
    // the operation ran and its settlement intent was written (as the paywall writes it), then the process died
    const requirements = { ...payload.accepted, amount: '1000' };
    expect(
      await transitionAuthorization(services.redis, {
        authKey,
        inFlightKey: paymentKeys.authorizationsInFlight(services.keys),
        operationId,
        from: ['pending'],
        to: 'settling',
        nowMs: Date.now(),
        fields: { settle_amount: '1000', payload: JSON.stringify(payload), requirements: JSON.stringify(requirements) },
      }),
    ).toBe(true);
    expect(await usdc(buyer.address)).toBe(buyerBefore);

    // the EIP-3009 sweep leaves a recorded upto settlement alone; a young one is left by the deferred recovery too
    expect(await recoverPayments(t, { olderThanMs: 0 })).toEqual({ refunded: [], released: [], completed: [] });
    expect(await services.paywall.recoverDeferred({ olderThanMs: 60_000 })).toEqual([]);
    expect(await services.paywall.recoverDeferred({ olderThanMs: 0 })).toEqual([operationId]);
    expect(await services.redis.hget(authKey, 'state')).toBe('settled');
    expect(buyerBefore - (await usdc(buyer.address))).toBe(1000n);
    expect(await permit2NonceUsed(services.paymentClient, buyer.address, nonce)).toBe(true);
    // a second round settles nothing twice
    expect(await services.paywall.recoverDeferred({ olderThanMs: 0 })).toEqual([]);
    expect(buyerBefore - (await usdc(buyer.address))).toBe(1000n);

    // the answer was never stored: the sweep refunds the settled amount, once
    const round = await recoverPayments(t, { olderThanMs: 0 });
    expect(round.refunded).toEqual([operationId]);
    expect(await recoverPayments(t, { olderThanMs: 0 })).toEqual({ refunded: [], released: [], completed: [] });
    await waitFor(
      () => usdc(buyer.address),
      (b) => b === buyerBefore,
    );
    expect(await usdc(t.stack.payment.treasury.address)).toBe(treasuryBefore);
    expect((await readRefund(services.redis, services.keys, operationId))?.amount).toBe('1000');
  });

  it('before the amount to settle was recorded: nothing is charged, the reservation is released', async () => {
    const buyer = t.stack.payment.buyers[6];
    const { services } = t.gateway;
    const operationId = 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7U02';
    const before = await usdc(buyer.address);
    const { authKey, nonce } = await reserved(buyer, 'crash early', operationId);
    // the process died while the operation ran: the reservation stays pending, nothing was settled
    expect(await services.paywall.recoverDeferred({ olderThanMs: 0 })).toEqual([]);
    const round = await recoverPayments(t, { olderThanMs: 0 });
    expect(round.released).toEqual([operationId]);
    expect(await services.redis.exists(authKey)).toBe(0);
    await pause(200);
    expect(await usdc(buyer.address)).toBe(before);
    expect(await permit2NonceUsed(services.paymentClient, buyer.address, nonce)).toBe(false);
  });
});

describe('upto on an MCP tool call (official MCP client)', () => {
  /** The tool's PaymentRequired and an `upto` PaymentPayload the official @x402/evm upto client signs for it. */
  async function uptoToolPayload(mcp: Client, buyer: LocalAccount, text: string): Promise<{ required: PaymentRequired; payload: PaymentPayload }> {
    const unpaid = await callUpperTool(mcp, text);
    expect(unpaid.isError).toBe(true);
    const required = unpaid.structuredContent as unknown as PaymentRequired;
    const client = new x402Client().register('eip155:*', new UptoEvmScheme(toClientEvmSigner(buyer as never)));
    return { required, payload: await client.createPaymentPayload(required) };
  }

  it('the tool offers exact first and upto with the route ceiling; paid with upto it settles exactly the answering price, no refund, and _meta names the settlement', async () => {
    const buyer = t.stack.payment.buyers[2];
    const mcp = await mcpClient();
    // the tool's description says when it offers upto and what that settles
    const tool = (await mcp.listTools()).tools.find((x) => x.name === 'intelligence_upper_market');
    expect(tool?.description).toContain("it also offers `upto` (a Permit2 ceiling), which settles only the answering offer's price, with no refund");
    const { required, payload } = await uptoToolPayload(mcp, buyer, 'mcp');
    expect(required.resource.url).toBe(`${t.url}/mcp`);
    expectRouteCeilingOffer(required, payload);
    const before = await snapshot(buyer);

    const paid = await callUpperTool(mcp, 'mcp', payload);
    expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
    expect(paid.structuredContent).toEqual({ upper: 'MCP' });
    const meta = paid._meta as Record<string, any>;
    expect(meta.provider.provider_id).toBe(sellers.cheap.id);
    expect(meta.payment).toMatchObject({ amount: '1000', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(meta.refund).toBeUndefined();
    // the result's _meta names the settlement of the answering price
    expect(meta['x402/payment-response']).toMatchObject({ success: true, amount: '1000', transaction: meta.payment.tx_hash });
    await expectSettledAnsweringPrice(buyer, before, payload, meta.execution_id, meta.payment.tx_hash);
  });

  it('a replay and a duplicate in flight run once and settle once, on MCP and on REST with the same payment', async () => {
    const buyer = t.stack.payment.buyers[2];
    const [mcpA, mcpB] = [await mcpClient(), await mcpClient()];
    const { payload } = await uptoToolPayload(mcpA, buyer, 'mcp dup');
    const before = await snapshot(buyer);
    // the same payment twice at once on two connections, then once more after, then on REST for the same call
    const [a, b] = await Promise.all([callUpperTool(mcpA, 'mcp dup', payload), callUpperTool(mcpB, 'mcp dup', payload)]);
    const replay = await callUpperTool(mcpA, 'mcp dup', payload);
    const rest = await post(executeUrl(), routedBody('mcp dup'), { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    const answers = [a, b, replay];
    const succeeded = answers.filter((r) => !r.isError);
    expect(succeeded.length).toBeGreaterThanOrEqual(1);
    for (const r of succeeded) expect(r.structuredContent).toEqual({ upper: 'MCP DUP' });
    // one execution; every other answer is the receipt (409 payment_already_used), never a second run
    expect(new Set(succeeded.map((r) => r._meta?.execution_id)).size).toBe(1);
    for (const r of answers.filter((x) => x.isError)) expect(problemOf(r)).toMatchObject({ status: 409, reason: 'payment_already_used' });
    expect(rest.status).toBe(409);
    expect(rest.body.reason).toBe('payment_already_used');
    expect(rest.body.execution_id).toBe(succeeded[0]._meta?.execution_id);
    await expectOneRunOneSettlement(buyer, before);

    // the same Permit2 nonce in another payload (a raised ceiling) is refused with the PaymentRequired before anything runs
    const refused = await callUpperTool(mcpA, 'mcp dup', raisedCeiling(payload));
    expect(refused.isError).toBe(true);
    expect((refused.structuredContent as { x402Version?: number } | undefined)?.x402Version).toBe(2);
    expect(calls(sellers.cheap)).toBe(before.cheapCalls + 1);
    expect(before.buyerUsdc - (await usdc(buyer.address))).toBe(1000n);
  });
});
