// `POST /api/v1/execute` and MCP tools paid with x402 `batch-settlement` (PAYMENT_SCHEMES=exact,batch-settlement)
// on a test gateway (anvil with our x402BatchSettlement, Redis), by the official @x402/fetch client with the
// official @x402/evm batch-settlement client scheme, unchanged (and the official MCP client): a burst over one
// channel, a duplicate in flight, copies sent at the same instant, a reused and a reordered voucher, and the
// channel's charged total against the prices.
import { ChannelSettlement, channelChainViews, createChannelStorage } from '@acg/channels';
import { createInProcessFacilitator } from '@acg/payments';
import { BatchSettlementEvmScheme as BatchServerScheme } from '@x402/evm/batch-settlement/server';
import { pino } from 'pino';
import { RedisKeys } from '@acg/redis';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme, signVoucher } from '@x402/evm/batch-settlement/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { createPublicClient, http } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { createGatewayClient } from '../../../packages/sdk/src/client.js';
import { useTestGateway } from './useTestGateway.js';
import { post, walletBalancesRequest } from './x402.js';

const PRICE = 1000n; // intelligence.wallet_balances: 0.001 USDC

const t = useTestGateway({ config: { chains: { ethereum: 'http://127.0.0.1:1' }, payment: { schemes: ['exact', 'batch-settlement'] } } });
let redis: Redis | undefined;
const mcpClients: Client[] = [];
afterAll(async () => {
  redis?.disconnect();
  for (const c of mcpClients) await c.close().catch(() => undefined);
});

/** The gateway's channels, read from its Redis (@acg/channels storage under its key prefix). */
function channels() {
  redis ??= new Redis(t.config.redisUrl);
  return createChannelStorage({ redis, keys: new RedisKeys(t.config.keyPrefix) });
}

function buyerClient(index: number) {
  const buyer = t.stack.payment.buyers[index];
  const publicClient = createPublicClient({ chain: t.stack.payment.chain, transport: http(t.stack.payment.rpcUrl) });
  const client = new x402Client().register('eip155:*', new BatchClientScheme(toClientEvmSigner(buyer, publicClient as never)));
  return { buyer, client, publicClient, fetch: wrapFetchWithPayment(fetch, client) };
}

async function paidCall(pay: typeof fetch, body: unknown) {
  const res = await pay(t.executeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** Deletes a channel's record from the test gateway's storage (the official storage's update returning undefined). */
async function updateToDeleted(channelId: string): Promise<void> {
  await channels().updateChannel(channelId, () => undefined);
}

/** The channel's charged total of `payer`'s one channel, base units (string). */
async function chargedOf(payer: string): Promise<string | undefined> {
  return (await channels().list()).find((c) => c.channelConfig.payer.toLowerCase() === payer.toLowerCase())?.chargedCumulativeAmount;
}

describe('batch-settlement on POST /api/v1/execute', () => {
  it('the 402 offers exact first and batch-settlement beside it', async () => {
    const r = await post(t.executeUrl, walletBalancesRequest(t.stack.payment.buyers[5].address));
    expect(r.status).toBe(402);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    expect(r.body).toMatchObject({ scheme: 'exact', maxAmountRequired: PRICE.toString() });
    expect(pr.accepts[1]).toMatchObject({ amount: '1000', payTo: t.stack.payment.treasury.address, extra: { withdrawDelay: 900, minDeposit: '10000' } });
  });

  it('a burst of calls over one channel: one deposit on chain, then vouchers; the channel is charged exactly the sum of the prices', async () => {
    const { buyer, fetch: pay } = buyerClient(5);
    const before = await t.usdc(buyer.address);
    const N = 12;
    const settlements = [];
    for (let i = 0; i < N; i++) {
      const r = await paidCall(pay, walletBalancesRequest(buyer.address));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.status).toBe('SUCCEEDED');
      settlements.push(decodePaymentResponseHeader(r.headers.get('payment-response')!));
    }
    // the first call and the 11th deposit (10 calls' worth each), the others are vouchers (no transaction)
    expect(settlements.map((s) => (s.transaction ? 'deposit' : 'voucher'))).toEqual(['deposit', ...Array(9).fill('voucher'), 'deposit', 'voucher']);
    expect(settlements.every((s) => s.success && s.extra?.chargedAmount === '1000')).toBe(true);
    const mine = (await channels().list()).filter((c) => c.channelConfig.payer.toLowerCase() === buyer.address.toLowerCase());
    expect(mine).toHaveLength(1);
    expect(mine[0].chargedCumulativeAmount).toBe((PRICE * BigInt(N)).toString());
    // the buyer paid the two deposits into escrow, nothing else
    expect(before - (await t.usdc(buyer.address))).toBe(BigInt(mine[0].balance));
  });

  it('a duplicate in flight runs once; a reused and a reordered voucher are refused with the x402 reason', async () => {
    const { buyer, client, fetch: pay, publicClient } = buyerClient(6);
    // open the channel
    expect((await paidCall(pay, walletBalancesRequest(buyer.address))).status).toBe(200);
    const body = walletBalancesRequest(buyer.address);
    const r402 = await post(t.executeUrl, body);
    const pr: PaymentRequired = decodePaymentRequiredHeader(r402.headers.get('payment-required')!);
    const payload: PaymentPayload = await client.createPaymentPayload(pr);
    expect(payload.payload).toMatchObject({ type: 'voucher', voucher: { maxClaimableAmount: '2000' } });
    const header = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) };
    // the same voucher twice at once: one execution, the duplicate waits and gets its receipt (no proof of payer) or the answer
    const [a, b] = await Promise.all([post(t.executeUrl, body, header), post(t.executeUrl, body, header)]);
    const statuses = [a.status, b.status].sort();
    const executions = new Set([a, b].filter((r) => r.status === 200).map((r) => r.body.execution_id));
    expect(executions.size).toBe(1);
    expect(statuses[0]).toBe(200);
    const charged = async () =>
      (await channels().list()).find((c) => c.channelConfig.payer.toLowerCase() === buyer.address.toLowerCase())!.chargedCumulativeAmount;
    expect(await charged()).toBe('2000');

    // the same voucher for another call: refused with the official reason and the channel state to resync
    const other = walletBalancesRequest(buyer.address, 'base');
    const reused = await post(t.executeUrl, { ...other, input: { ...other.input, address: t.stack.payment.buyers[0].address } }, header);
    expect(reused.status).toBe(402);
    expect(reused.body.reason).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    // a voucher skipping ahead: refused the same way
    const cfg = (payload.payload as { channelConfig: object; voucher: { channelId: `0x${string}` } }).channelConfig;
    const channelId = (payload.payload as { voucher: { channelId: `0x${string}` } }).voucher.channelId;
    const ahead: PaymentPayload = {
      ...payload,
      payload: {
        type: 'voucher',
        channelConfig: cfg,
        voucher: await signVoucher(toClientEvmSigner(buyer, publicClient as never), channelId, '5000', t.stack.payment.network),
      },
    };
    const reordered = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(ahead) });
    expect(reordered.status).toBe(402);
    expect(reordered.body.reason).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    expect(await charged()).toBe('2000');
  });

  it('a client that lost its channel state (restarted without storage) resynchronises from the corrective 402 and pays on', async () => {
    const first = buyerClient(1);
    for (let i = 0; i < 2; i++) expect((await paidCall(first.fetch, walletBalancesRequest(first.buyer.address))).status).toBe(200);
    // a fresh official client: it knows nothing of the channel, so it signs as if it were new
    const restarted = buyerClient(1);
    const body = walletBalancesRequest(restarted.buyer.address);
    const pr: PaymentRequired = decodePaymentRequiredHeader((await post(t.executeUrl, body)).headers.get('payment-required')!);
    const stale = await restarted.client.createPaymentPayload(pr);
    const refused = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(stale) });
    expect(refused.status).toBe(402);
    expect(refused.body.reason).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    // the corrective 402: its PaymentRequired names the x402 code in `error` (what the official client
    // compares) and carries the channel's state in the batch-settlement entry
    const corrective: PaymentRequired = decodePaymentRequiredHeader(refused.headers.get('payment-required')!);
    expect(corrective.error).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    expect(corrective.accepts.find((a) => a.scheme === 'batch-settlement')?.extra).toMatchObject({
      channelState: { chargedCumulativeAmount: '2000' },
      voucherState: { signedMaxClaimable: '2000' },
    });
    // so the official fetch client recovers (reads the channel on chain, checks its own voucher) and pays on
    const r = await paidCall(restarted.fetch, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const charged = (await channels().list()).find((c) => c.channelConfig.payer.toLowerCase() === restarted.buyer.address.toLowerCase())!;
    expect(charged.chargedCumulativeAmount).toBe('3000');
  });

  it('copies of one voucher sent at the same instant: one run, one charge, every copy gets the first answer (no channel_busy)', async () => {
    const { buyer, client, fetch: pay } = buyerClient(4);
    expect((await paidCall(pay, walletBalancesRequest(buyer.address))).status).toBe(200);
    const body = walletBalancesRequest(buyer.address);
    const pr: PaymentRequired = decodePaymentRequiredHeader((await post(t.executeUrl, body)).headers.get('payment-required')!);
    // the payment-identifier proves each copy comes from the payer: each gets the answer itself
    appendPaymentIdentifierToExtensions(pr.extensions!, generatePaymentId());
    const payload: PaymentPayload = await client.createPaymentPayload(pr);
    expect(payload.payload).toMatchObject({ type: 'voucher', voucher: { maxClaimableAmount: '2000' } });
    const header = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) };
    const copies = await Promise.all(Array.from({ length: 6 }, () => post(t.executeUrl, body, header)));
    for (const r of copies) {
      expect(r.status, String(r.body.reason ?? r.body.detail)).toBe(200);
      expect(r.body.reason).toBeUndefined();
    }
    expect(new Set(copies.map((r) => r.body.execution_id)).size).toBe(1);
    expect(await chargedOf(buyer.address)).toBe('2000');
    // the official client takes the channel state from the answer's settle response
    await client.handlePaymentResponse({
      paymentPayload: payload,
      requirements: payload.accepted,
      settleResponse: decodePaymentResponseHeader(copies[0].headers.get('payment-response')!),
    });
    // without proof of being the payer, copies at the same instant still never run twice: the first answer, or its receipt
    const bare: PaymentPayload = await client.createPaymentPayload(
      decodePaymentRequiredHeader((await post(t.executeUrl, body)).headers.get('payment-required')!),
    );
    const bareHeader = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(bare) };
    const raced = await Promise.all(Array.from({ length: 4 }, () => post(t.executeUrl, body, bareHeader)));
    expect(raced.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    for (const r of raced.filter((x) => x.status === 409)) expect(r.body.reason).toBe('payment_already_used');
    expect(new Set(raced.map((r) => r.body.execution_id)).size).toBe(1);
    expect(await chargedOf(buyer.address)).toBe('3000');
  });

  it('an MCP tool offers batch-settlement after exact and runs once per voucher (official MCP client)', async () => {
    const { buyer, client } = buyerClient(7);
    const mcp = new Client({ name: 'acg-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    mcpClients.push(mcp);
    await mcp.listTools();
    const args = { address: buyer.address, chain: 'base' };
    const callTool = async (payment?: PaymentPayload) =>
      (await mcp.callTool({
        name: 'intelligence_wallet_balances',
        arguments: args,
        ...(payment ? { _meta: { 'x402/payment': payment } } : {}),
      })) as CallToolResult;
    const executions: string[] = [];
    for (let i = 0; i < 3; i++) {
      const unpaid = await callTool();
      expect(unpaid.isError).toBe(true);
      const pr = unpaid.structuredContent as unknown as PaymentRequired;
      expect(pr.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
      const payload = await client.createPaymentPayload(pr);
      expect(payload.accepted.scheme).toBe('batch-settlement');
      const paid = await callTool(payload);
      expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ address: buyer.address, chain_id: 8453 });
      expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, extra: { chargedAmount: '1000' } });
      executions.push(paid._meta?.execution_id as string);
      // the tool's answer carries the settle response the official client reads its channel state from
      await client.handlePaymentResponse({
        paymentPayload: payload,
        requirements: payload.accepted,
        settleResponse: paid._meta?.['x402/payment-response'] as never,
      });
    }
    expect(new Set(executions).size).toBe(3);
    expect(await chargedOf(buyer.address)).toBe((3n * PRICE).toString());
  });
  it("a cooperative refund requested by the official client's refund(url): the unspent deposit back to the payer, what was charged claimed, in one transaction", async () => {
    const buyer = t.stack.payment.buyers[3];
    const publicClient = createPublicClient({ chain: t.stack.payment.chain, transport: http(t.stack.payment.rpcUrl) });
    const scheme = new BatchClientScheme(toClientEvmSigner(buyer, publicClient as never));
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', scheme));
    const start = await t.usdc(buyer.address);
    for (let i = 0; i < 3; i++) expect((await paidCall(pay, walletBalancesRequest(buyer.address))).status).toBe(200);
    const channel = (await channels().list()).find((c) => c.channelConfig.payer.toLowerCase() === buyer.address.toLowerCase())!;
    const deposit = BigInt(channel.balance);
    expect(start - (await t.usdc(buyer.address))).toBe(deposit);
    expect(channel.chargedCumulativeAmount).toBe((3n * PRICE).toString());
    const views = channelChainViews(publicClient as never);
    const receiverBefore = await views.receiver(t.stack.payment.treasury.address, t.stack.payment.usdc);

    // without a payment the resource answers the 402 of the channel parameters (batch-settlement alone)
    const probe = await fetch(`${t.url}/api/v1/channels/refund`);
    expect(probe.status).toBe(402);
    expect(decodePaymentRequiredHeader(probe.headers.get('payment-required')!).accepts.map((a) => a.scheme)).toEqual(['batch-settlement']);

    // a refund payload sent to a paid route is refused there (a paid route runs a capability; a refund runs none)
    const execute402 = await post(t.executeUrl, walletBalancesRequest(buyer.address));
    const accepted = decodePaymentRequiredHeader(execute402.headers.get('payment-required')!).accepts[1];
    const refundPayload: PaymentPayload = {
      x402Version: 2,
      accepted,
      payload: {
        type: 'refund',
        channelConfig: channel.channelConfig,
        voucher: await signVoucher(
          toClientEvmSigner(buyer, publicClient as never),
          channel.channelId as `0x${string}`,
          channel.chargedCumulativeAmount,
          t.stack.payment.network,
        ),
      },
    };
    const onExecute = await post(t.executeUrl, walletBalancesRequest(buyer.address), { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(refundPayload) });
    expect(onExecute.status).toBe(402);
    expect(onExecute.body.reason).toBe('invalid_batch_settlement_evm_payload_type');
    expect(start - (await t.usdc(buyer.address))).toBe(deposit);

    const settled = await scheme.refund(`${t.url}/api/v1/channels/refund`);
    expect(settled).toMatchObject({ success: true, amount: (deposit - 3n * PRICE).toString() });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // the payer got the unspent part back; the channel keeps exactly what was charged, claimed in the same transaction
    expect(start - (await t.usdc(buyer.address))).toBe(3n * PRICE);
    expect(await views.channel(channel.channelId as `0x${string}`)).toEqual({ balance: 3n * PRICE, totalClaimed: 3n * PRICE });
    const receiverAfter = await views.receiver(t.stack.payment.treasury.address, t.stack.payment.usdc);
    expect(receiverAfter.totalClaimed - receiverBefore.totalClaimed).toBe(3n * PRICE);
    // nothing left to refund: a second request is refused, and nothing moves
    await expect(scheme.refund(`${t.url}/api/v1/channels/refund`)).rejects.toThrow(/no remaining balance|refund_no_balance|Refund failed/);
    // a refund payload sent again by hand (past the client's own check) is refused by the gateway, and nothing moves
    const refundAccepted = decodePaymentRequiredHeader(probe.headers.get('payment-required')!).accepts[0];
    const again = await fetch(`${t.url}/api/v1/channels/refund`, {
      headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader({ ...refundPayload, accepted: refundAccepted }) },
    });
    expect(again.status).toBe(402);
    expect(((await again.json()) as { reason: string }).reason).toMatch(/^invalid_batch_settlement_evm_/);
    // the worker's next pass settles what the refund claimed to the treasury, even with no channel left in
    // storage (a full refund may delete its channel's record; here every record of this test gateway is
    // dropped so that the pass sees none)
    for (const c of await channels().list()) await updateToDeleted(c.channelId);
    const treasuryBefore = await t.usdc(t.stack.payment.treasury.address);
    const pass = await new ChannelSettlement({
      redis: t.gateway.services.redis,
      keys: t.gateway.services.keys,
      scheme: new BatchServerScheme(t.stack.payment.treasury.address, { storage: channels() }),
      facilitator: createInProcessFacilitator({
        rpcUrl: t.config.payment.rpcUrl,
        chain: t.config.payment.chain,
        signer: t.config.payment.facilitatorPrivateKey!,
        networks: [t.stack.payment.network],
      }),
      network: t.stack.payment.network,
      token: t.stack.payment.usdc,
      chain: views,
      claimThreshold: 1n,
      log: pino({ level: 'silent' }),
    }).pass();
    expect(pass.settle).toMatch(/^0x[0-9a-f]{64}$/);
    const receiverSettled = await views.receiver(t.stack.payment.treasury.address, t.stack.payment.usdc);
    expect(receiverSettled.totalSettled).toBe(receiverSettled.totalClaimed);
    expect((await t.usdc(t.stack.payment.treasury.address)) - treasuryBefore).toBeGreaterThanOrEqual(3n * PRICE);
    expect(start - (await t.usdc(buyer.address))).toBe(3n * PRICE);
  });
  it('the JS SDK pays over a channel and closes it through the refund resource (client.channels.refund)', async () => {
    const buyer = t.stack.payment.buyers[2];
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer, schemes: ['batch-settlement'], rpcUrl: t.stack.payment.rpcUrl });
    const start = await t.usdc(buyer.address);
    for (let i = 0; i < 2; i++) expect((await gw.execute('intelligence.wallet_balances', { address: buyer.address })).status).toBe('SUCCEEDED');
    const refunded = await gw.channels.refund({ path: '/api/v1/channels/refund' });
    expect(refunded.settlement).toMatchObject({ success: true });
    // the payer paid exactly the two calls; the rest of the deposit came back
    expect(start - (await t.usdc(buyer.address))).toBe(2n * PRICE);
  });
});
