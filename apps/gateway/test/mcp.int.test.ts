import { verifyReceiptSignatureEIP712 } from '@x402/extensions/offer-receipt';
import { defineCapability } from '@acg/capabilities';
import { LiquidationIndexStore } from '@acg/liquidations';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec, type DiscoveryExtension } from '@x402/extensions/bazaar';
import { appendPaymentIdentifierToExtensions, generatePaymentId, isPaymentIdentifierExtension } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoCapabilityParameters } from '../../../packages/capabilities/test/echoCapability.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { bearerToken, craftPayload, officialPayload, paymentHeader, post, usdcReader } from './x402.js';

/**
 * The MCP endpoint with the official MCP client (`Client` + `StreamableHTTPClientTransport`) and
 * x402 payments made by the official @x402/core client with @x402/evm's exact scheme, on a real
 * anvil payment chain and a private Redis (docs/decisions.md "Agents: MCP and x402 extensions").
 */

const PRICE = 1000n; // intelligence.wallet_balances: 0.001 USDC in base units
const TOOL = 'intelligence_wallet_balances';

let t: TestGateway;
let balanceOf: ReturnType<typeof usdcReader>;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestGateway();
  balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await t?.close();
});

/** A connected official MCP client (initialize over POST /mcp). */
async function connect(headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'acg-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** A connected client that has listed the tools, so it validates structured results against their output schemas. */
async function connectListed(headers: Record<string, string> = {}): Promise<Client> {
  const client = await connect(headers);
  await client.listTools();
  return client;
}

/** Calls a tool after listing the tools (the client validates structured results against the listed output schemas). */
async function call(client: Client, name: string, args: Record<string, unknown>, payment?: PaymentPayload): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args, ...(payment ? { _meta: { 'x402/payment': payment } } : {}) })) as CallToolResult;
}

const text = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text);

/** The PaymentRequired of an unpaid call, checked in both places the x402 MCP transport puts it. */
async function paymentRequired(client: Client, name: string, args: Record<string, unknown>): Promise<PaymentRequired> {
  const r = await call(client, name, args);
  expect(r.isError).toBe(true);
  const pr = r.structuredContent as unknown as PaymentRequired;
  expect(text(r)).toEqual({ 'x402/error': { code: 402, message: pr.error, data: pr } });
  return pr;
}

function expectValidBazaar(pr: PaymentRequired, toolName: string) {
  const bazaar = pr.extensions?.bazaar as DiscoveryExtension;
  expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
  expect(validateDiscoveryExtensionSpec(bazaar as unknown as Record<string, unknown>)).toEqual({ valid: true });
  expect(bazaar.info.input).toMatchObject({ type: 'mcp', toolName, transport: 'streamable-http' });
  expect(isPaymentIdentifierExtension(pr.extensions?.['payment-identifier'])).toBe(true);
}

describe('MCP endpoint (stateless Streamable HTTP)', () => {
  it('initializes with the current protocol version and lists every tool with its schemas', async () => {
    const client = await connect();
    expect(client.getServerVersion()?.name).toBe('agent-capability-gateway');
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name);
    expect(names.slice(0, 3)).toEqual(['search_capabilities', 'get_capability', 'get_health']);
    // one tool per executable capability, dots replaced
    for (const d of t.gateway.services.catalog.executable()) expect(names).toContain(d.id.replace('.', '_'));
    const balances = tools.find((x) => x.name === TOOL)!;
    expect(balances.title).toBe('intelligence.wallet_balances');
    expect(balances._meta).toMatchObject({ capability_id: 'intelligence.wallet_balances', price_base_units: '1000' });
    expect(balances.inputSchema.type).toBe('object');
    expect(balances.inputSchema.properties).toHaveProperty('address');
    expect(balances.outputSchema?.anyOf).toHaveLength(2);
    for (const x of tools) expect(x.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    // the protocol version the SDK negotiated is its latest
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  it('calls the free tools', async () => {
    const client = await connectListed();
    const found = await call(client, 'search_capabilities', { query: 'wallet balances', max_price_usdc: '0.01' });
    expect(found.isError).toBeFalsy();
    const caps = (found.structuredContent as { capabilities: { id: string; tool: string | null; price_base_units: string }[] }).capabilities;
    expect(caps.map((c) => c.id)).toEqual(['intelligence.wallet_balances']);
    expect(caps[0]).toMatchObject({ tool: TOOL, price_base_units: '1000' });
    expect(text(found)).toEqual(found.structuredContent);
    const gateway = await call(client, 'search_capabilities', { product: 'gateway' });
    expect((gateway.structuredContent as { capabilities: { id: string }[] }).capabilities.map((c) => c.id)).toContain('gateway.mcp');

    const one = await call(client, 'get_capability', { id: TOOL });
    expect(one.structuredContent).toMatchObject({ id: 'intelligence.wallet_balances', price_base_units: '1000' });
    expect((one.structuredContent as { input_schema: { properties: object } }).input_schema.properties).toHaveProperty('address');
    const unknown = await call(client, 'get_capability', { id: 'intelligence.nothing' });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatchObject({ status: 404 });

    const health = await call(client, 'get_health', {});
    expect(health.structuredContent).toHaveProperty('operational_status');
    const bad = await call(client, 'search_capabilities', { product: 'nope' });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatchObject({ status: 400, errors: [{ path: ['product'] }] });
  });

  it("is listed as gateway.mcp (surface MCP), LIVE on the prober's real initialize + tools/list", async () => {
    const catalog = (await fetch(`${t.url}/gateway-catalog.json`).then((r) => r.json())) as { capabilities: Record<string, any>[] };
    const entry = catalog.capabilities.find((c) => c.id === 'gateway.mcp')!;
    expect(entry).toMatchObject({ surface: 'MCP', endpoint: `${t.url}/mcp`, status: 'LIVE' });
    expect(entry.evidence.probe).toMatchObject({ url: `${t.url}/mcp`, method: 'POST', status: 200 });
  });

  it('keeps the HTTP edge rules: 1 MiB body limit (413) and JSON-RPC errors for malformed messages', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const big = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', pad: 'x'.repeat(1_100_000) }),
    });
    expect(big.status).toBe(413);
    expect(big.headers.get('content-type')).toContain('application/problem+json');
    const notRpc = await fetch(`${t.url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ hello: 'world' }) });
    expect(notRpc.status).toBe(400);
    expect(await notRpc.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const unknownTool = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'nothing_here', arguments: {} } }),
    });
    expect(await unknownTool.json()).toMatchObject({ id: 7, error: { code: -32602 } });
  });

  it('answers GET and DELETE with 405 (stateless: no SSE stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${t.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(r.status, method).toBe(405);
      expect(r.headers.get('allow')).toContain('POST');
    }
  });
});

describe('x402 over MCP', () => {
  it('gives the PaymentRequired in structuredContent and content[0].text, with a valid bazaar declaration', async () => {
    const client = await connectListed();
    const buyer = t.stack.payment.buyers[0];
    const pr = await paymentRequired(client, TOOL, { address: buyer.address, chain: 'base' });
    expect(pr.x402Version).toBe(2);
    expect(pr.error).toContain('_meta["x402/payment"]');
    expect(pr.resource.url).toBe(`${t.url}/mcp`);
    expect(pr.accepts[0]).toMatchObject({ scheme: 'exact', network: 'eip155:8453', amount: '1000', payTo: t.stack.payment.treasury.address });
    expectValidBazaar(pr, TOOL);
  });

  it('pays with the official x402 client, gets the result and payment-response, and is charged exactly once for two concurrent sends', async () => {
    const [a, b] = [await connectListed(), await connectListed()];
    const buyer = t.stack.payment.buyers[1];
    const args = { address: buyer.address, chain: 'base' };
    // the payment-identifier proves a resend comes from the payer (the settled authorization is public)
    const pr = await paymentRequired(a, TOOL, args);
    appendPaymentIdentifierToExtensions(pr.extensions!, generatePaymentId());
    const payload = await officialPayload(buyer, pr);
    const before = await balanceOf(buyer.address);
    const [first, second] = await Promise.all([call(a, TOOL, args, payload), call(b, TOOL, args, payload)]);
    for (const r of [first, second]) {
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ address: buyer.address, chain_id: 8453 });
      expect(r._meta?.['x402/payment-response']).toMatchObject({ success: true, network: 'eip155:8453', payer: buyer.address });
      expect(text(r)).toEqual(r.structuredContent);
    }
    // one execution, one settlement
    expect(first._meta?.execution_id).toMatch(/^exe_[0-9A-Z]{26}$/);
    // the execution's JWS proof, as REST gives it
    expect(first._meta?.proof).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    // and the x402 offer-receipt receipt, signed by the receipt key, naming the payer
    const receipt = (first._meta as any)['x402/payment-response'].extensions['offer-receipt'].info.receipt;
    const verified = await verifyReceiptSignatureEIP712(receipt);
    expect(verified.payload.payer).toBe(buyer.address);
    expect(second._meta?.execution_id).toBe(first._meta?.execution_id);
    const settle = first._meta?.['x402/payment-response'] as { transaction: string };
    expect(settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect((first._meta!.payment as { tx_hash: string }).tx_hash).toBe(settle.transaction);
    const after = await balanceOf(buyer.address);
    expect(before - after).toBe(PRICE);
    // read while or after the payment settled: the payer's balance at the block it names
    const reported = first.structuredContent as { block_number: string; usdc: { balance: string } };
    expect(BigInt(reported.usdc.balance)).toBe(await balanceOf(buyer.address, BigInt(reported.block_number)));
    expect([before, after]).toContain(BigInt(reported.usdc.balance));

    // a replay later returns the stored result, charged nothing more
    const replay = await call(a, TOOL, args, payload);
    expect(replay._meta).toMatchObject({ execution_id: first._meta?.execution_id, replayed: true });
    expect(replay.structuredContent).toEqual(first.structuredContent);
    expect(await balanceOf(buyer.address)).toBe(after);
    // the same authorization without the identifier (as read from the chain): the receipt only
    const { extensions: _id, ...onChain } = payload;
    const receiptOnly = await call(a, TOOL, args, onChain as PaymentPayload);
    expect(receiptOnly.isError).toBe(true);
    expect(text(receiptOnly)).toMatchObject({ status: 409, reason: 'payment_already_used', execution_id: first._meta?.execution_id });
    expect(text(receiptOnly)).not.toHaveProperty('result');
    // the payer's bearer token on the MCP connection is proof too
    const asPayer = await connectListed({ authorization: `Bearer ${await bearerToken(t.url, buyer)}` });
    const proven = await call(asPayer, TOOL, args, onChain as PaymentPayload);
    expect(proven.isError, JSON.stringify(proven.content)).toBeFalsy();
    expect(proven.structuredContent).toEqual(first.structuredContent);
    expect(await balanceOf(buyer.address)).toBe(after);
    // the same payment for other arguments is a conflict, never a second run
    const other = await call(a, TOOL, { address: t.stack.payment.treasury.address, chain: 'base' }, payload);
    expect(other.isError).toBe(true);
    expect(text(other)).toMatchObject({ status: 409, reason: 'payment_conflict' });
  });

  it("a bad bearer token on the connection never blocks a payment; the payer's valid token then gets the stored result", async () => {
    const badToken = await connectListed({ authorization: `Bearer acg_${'x'.repeat(43)}` });
    const buyer = t.stack.payment.buyers[7];
    const args = { address: buyer.address, chain: 'base' };
    // no payment identifier: only the bearer token can prove the payer of a resent payment
    const { extensions: _id, ...onChain } = await officialPayload(buyer, await paymentRequired(badToken, TOOL, args));
    const payload = onChain as PaymentPayload;
    const before = await balanceOf(buyer.address);
    const paid = await call(badToken, TOOL, args, payload);
    expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ address: buyer.address, chain_id: 8453 });
    expect(before - (await balanceOf(buyer.address))).toBe(PRICE);
    const again = await call(badToken, TOOL, args, payload);
    expect(again.isError).toBe(true);
    expect(text(again)).toMatchObject({ status: 409, reason: 'payment_already_used', execution_id: paid._meta?.execution_id });
    const asPayer = await connectListed({ authorization: `Bearer ${await bearerToken(t.url, buyer)}` });
    const proven = await call(asPayer, TOOL, args, payload);
    expect(proven.isError, JSON.stringify(proven.content)).toBeFalsy();
    expect(proven.structuredContent).toEqual(paid.structuredContent);
    expect(before - (await balanceOf(buyer.address))).toBe(PRICE);
  });

  it('shares the execute path with REST: a payment made over REST replays over MCP', async () => {
    const client = await connectListed();
    const buyer = t.stack.payment.buyers[2];
    const args = { address: buyer.address, chain: 'base' };
    const pr = await paymentRequired(client, TOOL, args);
    appendPaymentIdentifierToExtensions(pr.extensions!, generatePaymentId());
    const payload = await officialPayload(buyer, pr);
    const rest = await post(
      `${t.url}/api/v1/execute`,
      { capability_id: 'intelligence.wallet_balances', input: args },
      { 'PAYMENT-SIGNATURE': paymentHeader(payload) },
    );
    expect(rest.status).toBe(200);
    const mcp = await call(client, TOOL, args, payload);
    expect(mcp._meta?.execution_id).toBe(rest.body.execution_id);
    expect(mcp.structuredContent).toEqual(rest.body.result);
  });

  it('refuses an invalid payment with isError and the reason, charging nothing', async () => {
    const client = await connectListed();
    const victim = t.stack.payment.buyers[3];
    const args = { address: victim.address, chain: 'base' };
    const pr = await paymentRequired(client, TOOL, args);
    const before = await balanceOf(victim.address);
    // signed by another key than the payer it names
    const forged = await craftPayload(t.stack.payment.buyers[4], pr.accepts[0], 8453, { from: victim.address });
    const r = await call(client, TOOL, args, forged);
    expect(r.isError).toBe(true);
    const refused = r.structuredContent as PaymentRequired & { reason: string };
    expect(refused.reason).toMatch(/signature/);
    expect(refused.error).toMatch(/signature/i);
    expect(text(r)['x402/error']).toMatchObject({ code: 402, data: { reason: refused.reason } });
    const notAPayload = await call(client, TOOL, args, { x402Version: 2 } as unknown as PaymentPayload);
    expect((notAPayload.structuredContent as { reason: string }).reason).toBe('invalid_payment_header');
    expect(await balanceOf(victim.address)).toBe(before);
  });

  it('refuses invalid arguments before any payment', async () => {
    const client = await connectListed();
    const r = await call(client, TOOL, { address: 'nope' });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatchObject({ status: 400, errors: [{ path: ['input', 'address'] }] });
  });

  it('honours payment-identifier: same id and payload → the stored result; same id, another payload → 409', async () => {
    const client = await connectListed();
    const buyer = t.stack.payment.buyers[5];
    const args = { address: buyer.address, chain: 'base' };
    const id = generatePaymentId();
    const pr = await paymentRequired(client, TOOL, args);
    appendPaymentIdentifierToExtensions(pr.extensions!, id);
    const payload = await officialPayload(buyer, pr);
    const before = await balanceOf(buyer.address);
    const first = await call(client, TOOL, args, payload);
    expect(first.isError).toBeFalsy();
    const again = await call(client, TOOL, args, payload);
    expect(again._meta?.execution_id).toBe(first._meta?.execution_id);
    // a fresh signature (new nonce) under the same id is another payload
    const otherPayload = await officialPayload(buyer, pr);
    const conflict = await call(client, TOOL, args, otherPayload);
    expect(conflict.isError).toBe(true);
    expect(text(conflict)).toMatchObject({ status: 409, reason: 'payment_identifier_conflict' });
    expect(before - (await balanceOf(buyer.address))).toBe(PRICE);
  });

  it('lets a bearer-only capability be paid per call with x402', async () => {
    // an indexed (empty) block, so the search runs
    const { redis, keys } = t.gateway.services;
    await new LiquidationIndexStore(redis, keys, 'ethereum').writeBlock(
      { block_number: 1, block_timestamp: Math.floor(Date.now() / 1000), base_fee_wei: '1000000000', eth_usd: 3000, updated_at: new Date().toISOString() },
      {},
      [],
    );
    const client = await connectListed();
    const buyer = t.stack.payment.buyers[6];
    const pr = await paymentRequired(client, 'mev_liquidation_search', { chain: 'ethereum' });
    expect(pr.accepts[0].amount).toBe('20000');
    expectValidBazaar(pr, 'mev_liquidation_search');
    const before = await balanceOf(buyer.address);
    const r = await call(client, 'mev_liquidation_search', { chain: 'ethereum' }, await officialPayload(buyer, pr));
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ chain: 'ethereum', block_number: 1, opportunities: [] });
    expect(before - (await balanceOf(buyer.address))).toBe(20_000n);
  });
});

describe('the tool list follows the catalog', () => {
  it('lists a capability added at run time, paid like the others, and drops it when it leaves', async () => {
    const added = defineCapability({
      ...echoCapabilityParameters('intelligence.echo_mcp', { price: 2500n }),
      name: 'Echo (MCP test)',
      run: async ({ text }) => ({ text }),
    });
    const { catalog } = t.gateway.services;
    catalog.setSource('test', [added]);
    try {
      const client = await connect();
      const { tools } = await client.listTools();
      const tool = tools.find((x) => x.name === 'intelligence_echo_mcp');
      expect(tool).toMatchObject({ title: 'intelligence.echo_mcp', _meta: { capability_id: 'intelligence.echo_mcp', price_base_units: '2500' } });
      expect(tool!.inputSchema.properties).toHaveProperty('text');
      const buyer = t.stack.payment.buyers[7];
      const pr = await paymentRequired(client, 'intelligence_echo_mcp', { text: 'hello' });
      expect(pr.accepts[0].amount).toBe('2500');
      expectValidBazaar(pr, 'intelligence_echo_mcp');
      expect((pr.extensions!.bazaar as DiscoveryExtension).info.output).toEqual({ type: 'json', example: { text: 'hi' } });
      const r = await call(client, 'intelligence_echo_mcp', { text: 'hello' }, await officialPayload(buyer, pr));
      expect(r.structuredContent).toEqual({ text: 'hello' });
    } finally {
      catalog.setSource('test', []);
    }
    const client = await connect();
    expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('intelligence_echo_mcp');
  });
});
