// A third-party provider's offer paid by x402 `batch-settlement` vouchers through `POST /api/v1/execute`
// (PAYMENT_SCHEMES=exact,batch-settlement) on a test gateway (anvil with our x402BatchSettlement, private
// Redis), by the official @x402/fetch client with the official @x402/evm batch-settlement client scheme,
// unchanged; the worker's channel pass (`channelSettlementOf`: ChannelSettlement over the official
// BatchSettlementChannelManager, the in-process facilitator) claims and settles. The provider's share comes
// only from claimed and settled funds (docs/decisions.md "batch-settlement": provider offers).
import { channelChainViews, channelKeys, createChannelStorage } from '@acg/channels';
import { createInProcessFacilitator } from '@acg/payments';
import { RedisKeys } from '@acg/redis';
import type { FacilitatorClient } from '@x402/core/server';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { BATCH_SETTLEMENT_ADDRESS, toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { createPublicClient, http, type PublicClient } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { upperCaseAnswer, upperCaseCapability } from '../../gateway/test/providerServer.js';
import { useRegisteredProvider } from '../../gateway/test/useRegisteredProvider.js';
import { useTestGateway } from '../../gateway/test/useTestGateway.js';
import { post } from '../../gateway/test/x402.js';
import { channelSettlementOf } from '../src/channels.js';

const PRICE = 2000n; // 0.002 USDC, one offer: a single-price route
const CAPABILITY = 'intelligence.upper_voucher';

const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' }, payment: { schemes: ['exact', 'batch-settlement'] } } });
// the provider fails the text "fail" (500), upper-cases any other
const provider = useRegisteredProvider(
  t,
  (call) => ((call.body.input as { text: string }).text === 'fail' ? { status: 500, body: {} } : upperCaseAnswer(call)),
  { name: 'Voucher Co', capabilities: [upperCaseCapability('upper_voucher', '0.002')] },
);
const extra: Redis[] = [];
afterAll(() => {
  for (const r of extra) r.disconnect();
});

const log = pino({ level: 'silent' });
const body = (text: string) => ({ capability_id: CAPABILITY, input: { text } });

function buyerClient(index: number) {
  const buyer = t.stack.payment.buyers[index];
  const publicClient = createPublicClient({ chain: t.stack.payment.chain, transport: http(t.stack.payment.rpcUrl) });
  const client = new x402Client().register('eip155:*', new BatchClientScheme(toClientEvmSigner(buyer, publicClient as never)));
  return { buyer, client, fetch: wrapFetchWithPayment(fetch, client) };
}

async function paidCall(pay: typeof fetch, b: unknown) {
  const res = await pay(`${t.url}/api/v1/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
  return { status: res.status, body: (await res.json()) as any };
}

/** The worker's channel pass over the gateway's Redis; `over` replaces options (a dying facilitator, its own connection). */
function workerPass(over: Parameters<typeof channelSettlementOf>[2] = {}) {
  const s = t.gateway.services;
  return channelSettlementOf(
    { config: t.config, redis: s.redis, keys: s.keys, paymentClient: s.paymentClient as PublicClient, providerLedger: s.providerLedger },
    log,
    { claimThreshold: 1n, ...over },
  );
}

describe('a provider offer paid by batch-settlement vouchers', () => {
  it('the 402 of a single-price provider route offers exact, then batch-settlement', async () => {
    const r = await post(`${t.url}/api/v1/execute`, body('x'));
    expect(r.status).toBe(402);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    expect(pr.accepts[1]).toMatchObject({ amount: PRICE.toString() });
  });

  it("credits the provider's share only once claimed and settled, once, through a replay and a worker killed between claim and settle", async () => {
    const { buyer, client, fetch: pay } = buyerClient(3);
    const ledger = t.gateway.services.providerLedger;
    const views = channelChainViews(t.gateway.services.paymentClient as PublicClient);
    const treasury = t.stack.payment.treasury.address;
    const before = { buyer: await t.usdc(buyer.address), treasury: await t.usdc(treasury), escrow: await t.usdc(BATCH_SETTLEMENT_ADDRESS) };
    const creditedBefore = (await ledger.totals()).credited;

    // 1. calls to the provider's offer, each paid by the official client (a deposit first, then vouchers)
    const executions: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await paidCall(pay, body(`call ${i}`));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ status: 'SUCCEEDED', result: { upper: `CALL ${i}` }, provider: { provider_id: provider.id } });
      executions.push(r.body.execution_id);
    }
    // one more by hand, to resend its voucher: a replay gets the first answer (or its receipt), never a second run
    const manual = body('manual');
    const pr = decodePaymentRequiredHeader((await post(`${t.url}/api/v1/execute`, manual)).headers.get('payment-required')!);
    const payload: PaymentPayload = await client.createPaymentPayload(pr);
    expect(payload.payload).toMatchObject({ type: 'voucher', voucher: { maxClaimableAmount: (6n * PRICE).toString() } });
    const header = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) };
    const first = await post(`${t.url}/api/v1/execute`, manual, header);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    executions.push(first.body.execution_id);
    const replayed = await post(`${t.url}/api/v1/execute`, manual, header);
    expect([200, 409]).toContain(replayed.status);
    expect(replayed.body.execution_id).toBe(first.body.execution_id);
    const calls = BigInt(executions.length);
    const charged = calls * PRICE;
    expect(provider.server.calls.filter((c) => executions.includes(c.body.execution_id))).toHaveLength(executions.length);

    // the channel is charged exactly the vouchers; nothing of it is payable to the provider yet
    const storage = createChannelStorage({ redis: t.gateway.services.redis, keys: new RedisKeys(t.config.keyPrefix) });
    const channel = (await storage.list()).find((c) => c.channelConfig.payer.toLowerCase() === buyer.address.toLowerCase())!;
    expect(channel.chargedCumulativeAmount).toBe(charged.toString());
    for (const id of executions) expect(await ledger.entry(id)).toBeUndefined();
    expect((await ledger.totals()).credited).toBe(creditedBefore);

    // 2. a worker killed after its claim reached the chain, before it settled (no answer, lease not released)
    const payment = t.config.payment;
    const facilitator = createInProcessFacilitator({
      rpcUrl: payment.rpcUrl,
      chain: payment.chain,
      signer: payment.facilitatorPrivateKey!,
      networks: [`eip155:${payment.chain.id}`],
    });
    let claimed!: () => void;
    const claimOnChain = new Promise<void>((resolve) => {
      claimed = resolve;
    });
    const dying: FacilitatorClient = {
      verify: (p, r) => facilitator.verify(p, r),
      getSupported: () => facilitator.getSupported(),
      settle: async (p, r) => {
        const type = (p.payload as { type: string }).type;
        if (type === 'settle') return new Promise(() => undefined); // died before the settlement was sent
        const result = await facilitator.settle(p, r);
        if (type === 'claim') claimed();
        return result;
      },
    };
    const ownRedis = new Redis(t.config.redisUrl);
    extra.push(ownRedis);
    const doomed = workerPass({ facilitator: dying, redis: ownRedis, leaseMs: 1_500 });
    void doomed.pass().catch(() => undefined);
    await claimOnChain;
    ownRedis.disconnect();
    expect((await views.channel(channel.channelId as `0x${string}`)).totalClaimed).toBe(charged);
    // claimed but not settled: still nothing payable to the provider
    expect((await views.receiver(treasury, t.stack.payment.usdc)).totalSettled).toBeLessThan(
      (await views.receiver(treasury, t.stack.payment.usdc)).totalClaimed,
    );
    for (const id of executions) expect(await ledger.entry(id)).toBeUndefined();

    // 3. a restarted worker (once the dead one's lease expired) settles what the chain says is unsettled; the shares are credited then
    const restarted = workerPass();
    let report = await restarted.pass();
    while (report.skipped) {
      await new Promise((r) => setTimeout(r, 200));
      report = await restarted.pass();
    }
    expect(report.settle).toMatch(/^0x[0-9a-f]{64}$/);
    for (const id of executions) {
      expect(await ledger.entry(id)).toMatchObject({ provider_id: provider.id, payer: buyer.address, price: PRICE, payment_tx_hash: report.settle });
    }
    expect((await ledger.totals()).credited - creditedBefore).toBe(charged);

    // 4. more passes, and the replayed voucher again: nothing is credited twice
    await restarted.pass({ full: true });
    expect((await post(`${t.url}/api/v1/execute`, manual, header)).body.execution_id).toBe(first.body.execution_id);
    expect((await ledger.totals()).credited - creditedBefore).toBe(charged);

    // 5. the money adds up to the base unit: the buyer's deposit = treasury's gain + what stays in escrow; the ledger credited the vouchers' total
    const after = { buyer: await t.usdc(buyer.address), treasury: await t.usdc(treasury), escrow: await t.usdc(BATCH_SETTLEMENT_ADDRESS) };
    const deposit = before.buyer - after.buyer;
    expect(await views.channel(channel.channelId as `0x${string}`)).toEqual({ balance: deposit, totalClaimed: charged });
    expect(after.treasury - before.treasury).toBe(charged);
    expect(after.escrow - before.escrow).toBe(deposit - charged);
    expect(deposit).toBe(after.treasury - before.treasury + (after.escrow - before.escrow));
  });
  it("a quoted call paid by voucher: charged the quoted price once, the provider's share credited only after claim and settlement", async () => {
    const { buyer, fetch: pay } = buyerClient(2);
    const ledger = t.gateway.services.providerLedger;
    const input = { text: 'quoted' };
    const q = await post(`${t.url}/api/v1/quotes`, { capability_id: CAPABILITY, input });
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    expect(q.body).toMatchObject({ provider_id: provider.id, price_base_units: PRICE.toString() });
    const quoted = { capability_id: CAPABILITY, input, quote_id: q.body.quote_id };
    const pr = decodePaymentRequiredHeader((await post(`${t.url}/api/v1/execute`, quoted)).headers.get('payment-required')!);
    expect(pr.accepts[0].scheme).toBe('exact');
    expect(pr.accepts.find((a) => a.scheme === 'batch-settlement')).toMatchObject({ amount: PRICE.toString() });
    const r = await paidCall(pay, quoted);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'SUCCEEDED', result: { upper: 'QUOTED' }, payment: { amount: PRICE.toString() } });
    expect(r.body.refund).toBeUndefined();
    // the quote is used: a fresh payment naming it is refused before anything is charged
    expect((await paidCall(pay, quoted)).status).toBe(409);
    const storage = createChannelStorage({ redis: t.gateway.services.redis, keys: new RedisKeys(t.config.keyPrefix) });
    const channel = (await storage.list()).find((c) => c.channelConfig.payer.toLowerCase() === buyer.address.toLowerCase())!;
    expect(channel.chargedCumulativeAmount).toBe(PRICE.toString());
    expect(await ledger.entry(r.body.execution_id)).toBeUndefined();
    let report = await workerPass().pass({ full: true });
    while (report.skipped) {
      await new Promise((res) => setTimeout(res, 200));
      report = await workerPass().pass({ full: true });
    }
    expect(await ledger.entry(r.body.execution_id)).toMatchObject({ provider_id: provider.id, price: PRICE, payment_tx_hash: report.settle });
  });
  it("a client's cooperative refund claims what the channel was charged; the provider is credited at the worker's next settlement, once", async () => {
    const buyer = t.stack.payment.buyers[4];
    const publicClient = createPublicClient({ chain: t.stack.payment.chain, transport: http(t.stack.payment.rpcUrl) });
    const scheme = new BatchClientScheme(toClientEvmSigner(buyer, publicClient as never));
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', scheme));
    const ledger = t.gateway.services.providerLedger;
    const start = await t.usdc(buyer.address);
    const executions: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await paidCall(pay, body(`refunded ${i}`));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      executions.push(r.body.execution_id);
    }
    const settled = await scheme.refund(`${t.url}/api/v1/channels/refund`);
    expect(settled.success).toBe(true);
    expect(start - (await t.usdc(buyer.address))).toBe(2n * PRICE);
    // claimed by the refund's transaction, not yet settled to the treasury: nothing credited
    for (const id of executions) expect(await ledger.entry(id)).toBeUndefined();
    let report = await workerPass().pass();
    while (report.skipped) {
      await new Promise((res) => setTimeout(res, 200));
      report = await workerPass().pass();
    }
    expect(report.settle).toMatch(/^0x[0-9a-f]{64}$/);
    for (const id of executions) expect(await ledger.entry(id)).toMatchObject({ provider_id: provider.id, price: PRICE, payment_tx_hash: report.settle });
    const credited = (await ledger.totals()).credited;
    await workerPass().pass({ full: true });
    expect((await ledger.totals()).credited).toBe(credited);
  });
  it('a provider call that fails is not charged, records no share, and its voucher pays the next call once', async () => {
    const { buyer, client, fetch: pay } = buyerClient(5);
    const storage = createChannelStorage({ redis: t.gateway.services.redis, keys: new RedisKeys(t.config.keyPrefix) });
    const charged = async () =>
      (await storage.list()).find((c) => c.channelConfig.payer.toLowerCase() === buyer.address.toLowerCase())?.chargedCumulativeAmount;
    expect((await paidCall(pay, body('open'))).status).toBe(200);
    const pr = decodePaymentRequiredHeader((await post(`${t.url}/api/v1/execute`, body('fail'))).headers.get('payment-required')!);
    const payload: PaymentPayload = await client.createPaymentPayload(pr);
    expect(payload.payload).toMatchObject({ type: 'voucher', voucher: { maxClaimableAmount: (2n * PRICE).toString() } });
    const header = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) };
    const failed = await post(`${t.url}/api/v1/execute`, body('fail'), header);
    expect(failed.status).toBe(502);
    expect(failed.body.refund).toBeUndefined();
    expect(await charged()).toBe(PRICE.toString());
    const credits = (id: string) => t.gateway.services.redis.zrange(channelKeys.credits(t.gateway.services.keys, id), '0', '-1');
    const channelId = (payload.payload as { voucher: { channelId: string } }).voucher.channelId.toLowerCase();
    const recorded = await credits(channelId);
    // the same voucher, not charged, now pays another call: charged once, one share recorded for it
    const ok = await post(`${t.url}/api/v1/execute`, body('after failure'), header);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(await charged()).toBe((2n * PRICE).toString());
    const after = await credits(channelId);
    expect(after.length - recorded.length).toBe(1);
    expect(after.map((c) => JSON.parse(c).execution_id)).toContain(ok.body.execution_id);
    expect(after.map((c) => JSON.parse(c).execution_id)).not.toContain(failed.body.execution_id);
  });
});
