import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../../apps/gateway/test/harness.js';
import { usdcReader } from '../../../apps/gateway/test/x402.js';
import { callPaidTool, createGatewayClient, createGatewayContext, PaymentRequiredError, SpendLimitExceededError, type McpToolResult } from '../src/index.js';

/**
 * The SDK's MCP helper (`client.mcp.callTool` / `callPaidTool`) with the official MCP client
 * (`@modelcontextprotocol/sdk` `Client` + `StreamableHTTPClientTransport`) against a real gateway's
 * `POST /mcp`, on a real anvil chain (chain id 8453, real USDC) and a private Redis: the README's
 * recipe, run.
 */
const TOOL = 'intelligence_wallet_balances';
const PRICE = 1_000n; // 0.001 USDC in base units

let t: TestGateway;
let balanceOf: (who: `0x${string}`) => Promise<bigint>;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestGateway();
  balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await t?.close();
});

async function connect(): Promise<Client> {
  const mcp = new Client({ name: 'acg-sdk-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
  await mcp.listTools(); // the client validates structured results against the listed output schemas
  clients.push(mcp);
  return mcp;
}

const text = (r: McpToolResult) => JSON.parse((r.content as { text: string }[])[0]!.text);

describe('client.mcp.callTool', () => {
  it('pays a paid tool with x402 over MCP: result, payment-response, the buyer charged exactly the price once', async () => {
    const buyer = t.stack.payment.buyers[0]!;
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer, spendLimits: { perCallUsdc: '0.01', totalUsdc: '0.05' } });
    const mcp = await connect();
    const before = await balanceOf(buyer.address);

    const r = await gw.mcp.callTool(mcp, { name: TOOL, arguments: { address: buyer.address, chain: 'base' } });

    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ address: buyer.address, chain_id: 8453 });
    const meta = r._meta as Record<string, any>;
    expect(meta['x402/payment-response']).toMatchObject({ success: true, network: 'eip155:8453', payer: buyer.address });
    expect(meta.execution_id).toMatch(/^exe_[0-9A-Z]{26}$/);
    expect(meta.payment).toEqual({ tx_hash: meta['x402/payment-response'].transaction, amount: '1000' });
    expect(before - (await balanceOf(buyer.address))).toBe(PRICE);
    expect(gw.spent()).toEqual({ baseUnits: PRICE, usdc: '0.001', pendingBaseUnits: 0n });
  });

  it('passes free tools and tool errors through without paying', async () => {
    const buyer = t.stack.payment.buyers[1]!;
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer });
    const mcp = await connect();
    const found = await gw.mcp.callTool(mcp, { name: 'search_capabilities', arguments: { query: 'wallet balances' } });
    expect(found.isError).toBeFalsy();
    expect((found.structuredContent as { capabilities: { id: string }[] }).capabilities.map((c) => c.id)).toContain('intelligence.wallet_balances');
    const bad = await gw.mcp.callTool(mcp, { name: TOOL, arguments: { address: 'nope' } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatchObject({ status: 400, errors: [{ path: ['input', 'address'] }] });
    expect(gw.spent().baseUnits).toBe(0n);
  });

  it('without an account, throws PaymentRequiredError with the decoded PaymentRequired', async () => {
    const gw = createGatewayClient({ baseUrl: t.url });
    const mcp = await connect();
    const e = await gw.mcp.callTool(mcp, { name: TOOL, arguments: { address: t.stack.payment.treasury.address } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PaymentRequiredError);
    expect((e as PaymentRequiredError).capabilityId).toBe('intelligence.wallet_balances');
    expect((e as PaymentRequiredError).amount).toBe(PRICE);
    expect((e as PaymentRequiredError).paymentRequired.resource.url).toBe(`${t.url}/mcp`);
  });

  it('checks the spend limits before signing, and releases a refused payment', async () => {
    const buyer = t.stack.payment.buyers[2]!;
    const mcp = await connect();
    const before = await balanceOf(buyer.address);
    const tight = createGatewayClient({ baseUrl: t.url, account: buyer, spendLimits: { perCallUsdc: '0.0005' } });
    await expect(tight.mcp.callTool(mcp, { name: TOOL, arguments: { address: buyer.address } })).rejects.toBeInstanceOf(SpendLimitExceededError);
    expect(await balanceOf(buyer.address)).toBe(before);

    // a fresh account holds no USDC: the gateway refuses the payment, nothing is counted
    const ctx = createGatewayContext({ baseUrl: t.url, account: privateKeyToAccount(generatePrivateKey()) });
    const e = await callPaidTool(ctx, { client: mcp, name: TOOL, arguments: { address: buyer.address } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PaymentRequiredError);
    expect((e as PaymentRequiredError).reason).toMatch(/insufficient_balance/);
    expect(ctx.ledger.totals()).toEqual({ baseUnits: 0n, usdc: '0', pendingBaseUnits: 0n });
  });
});
