import { createChannelStorage, channelChainViews } from '@acg/channels';
import {
  BASE_CHAIN_ID,
  PERMIT2_ADDRESS,
  setupPaymentChain,
  startAnvil,
  startRedisCluster,
  usdcAbi,
  type AnvilInstance,
  type DevStack,
  type PaymentChainInfo,
  type RedisClusterHandle,
} from '@acg/devnet';
import { readRefund } from '@acg/treasury';
import type { OfferScorer } from '@acg/provider-directory';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme, InMemoryClientChannelStorage, updateChannelFromSettle } from '@x402/evm/batch-settlement/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import pino from 'pino';
import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import { createPublicClient, createWalletClient, http, maxUint256, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../gateway/test/harness.js';
import { registerProvider, startTestProvider, upperCaseAnswer } from '../../gateway/test/providerServer.js';
import { waitFor } from '../../gateway/test/waitFor.js';
import { officialPayload, paymentHeader, post, walletBalancesRequest } from '../../gateway/test/x402.js';
import { channelSettlementOf } from '../src/channels.js';

/**
 * The three x402 schemes through `POST /api/v1/execute` on a private 3-master Redis Cluster with TWO
 * gateways (docs/decisions.md "batch-settlement channels", "Payment schemes"; packages/channels README),
 * on a real anvil payment chain (real USDC, Permit2 and our x402 contracts at the canonical addresses),
 * paid by the official @x402/fetch client with the official @x402/evm clients, unchanged, and the
 * worker's channel pass (`channelSettlementOf`):
 *
 * - batch-settlement: one buyer's 200 calls over one channel alternate between the gateways while three
 *   other channels do the same at once; every accepted voucher is charged once; a voucher accepted on one
 *   gateway and sent to the other for another request is refused with x402's code (and the same request
 *   gets the stored answer); a worker killed after its claim reached the chain loses nothing; the
 *   vouchers are claimed in a few transactions; escrow (`channels(id)`), the receiver's totals, the
 *   treasury and the execution records add up to the voucher total to the base unit;
 * - exact: the same payment sent to both gateways at once runs once and is charged once;
 * - upto on a routed call (offers at 0.001, 0.002, 0.003 USDC): replayed on the other gateway it runs
 *   nothing and settles nothing twice; the settled amount is the answering offer's price.
 */
const PRICE = 1000n; // intelligence.wallet_balances, USDC base units
const DEPOSIT = 1_000_000n; // 1 USDC per channel: one deposit covers every call of this test
const MAIN_CALLS = 200;
const SIDE_CALLS = 50;
const log = pino({ level: 'silent' });

let cluster: RedisClusterHandle;
let anvil: AnvilInstance;
let pay: PaymentChainInfo;
let g1: TestGateway;
let g2: TestGateway;
const gateways = () => [g1, g2];
const sellers: { id: string; account: LocalAccount; server: Awaited<ReturnType<typeof startTestProvider>> }[] = [];
const trust = new Map<string, number>();
const scorer: OfferScorer = { scoreOf: async (providerId) => trust.get(providerId) ?? null };
const usdc = (a: `0x${string}`) => g1.usdc(a);

beforeAll(async () => {
  [cluster, anvil] = await Promise.all([startRedisCluster(), startAnvil({ chainId: BASE_CHAIN_ID, quiet: true })]);
  pay = await setupPaymentChain(anvil.rpcUrl);
  // one payment chain for both gateways; their Redis is the cluster (stopped here, not by the harness)
  const stack: DevStack = { payment: { ...pay, anvil }, redis: { url: cluster.url, spawned: false, stop: async () => undefined }, stop: async () => undefined };
  const config = {
    redisUrl: cluster.url,
    redisClusterNodes: cluster.nodes,
    // one deployment: the same hash-tagged prefix on both gateways (docs/operating.md)
    keyPrefix: `{acg:test:${ulid()}}:`,
    rateLimitPerSecond: 0,
    chains: { ethereum: 'http://127.0.0.1:1' },
    // secrets at rest are readable by every gateway of the deployment (one WEBHOOK_SECRET_KEY)
    walletMonitor: { webhookPolicy: 'development' as const, webhookSecretKey: randomBytes(32).toString('hex') },
    payment: { schemes: ['exact', 'batch-settlement'] as ('exact' | 'batch-settlement')[] },
  };
  g1 = await startTestGateway({ stack, config, offerScorer: scorer });
  g2 = await startTestGateway({ stack, config, offerScorer: scorer, prober: false });
}, 120_000);
afterAll(async () => {
  await g2?.close();
  await g1?.close();
  for (const s of sellers) await s.server.close();
  await anvil?.stop();
  await cluster?.stop();
});

/** The worker's channel pass on the deployment (the gateways' cluster, keys and config), `over` replacing options. */
function workerPass(over: Parameters<typeof channelSettlementOf>[2] = {}) {
  return channelSettlementOf({ ...g1.gateway.services, config: g1.config }, log, {
    claimThreshold: 100n * PRICE,
    claimIntervalSeconds: 86_400,
    refundIdleSeconds: 0,
    ...over,
  });
}

/** A buyer paying with the official batch-settlement client (1 USDC deposits) through @x402/fetch, alternating between the gateways call by call. */
function channelBuyer(buyer: LocalAccount) {
  const publicClient = createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) });
  const storage = new InMemoryClientChannelStorage();
  const client = new x402Client().register(
    'eip155:*',
    new BatchClientScheme(toClientEvmSigner(buyer, publicClient as never), { storage, depositStrategy: () => DEPOSIT.toString() }),
  );
  const pay402 = wrapFetchWithPayment(fetch, client);
  let n = 0;
  return {
    client,
    storage,
    async call() {
      const g = gateways()[n++ % 2];
      const res = await pay402(g.executeUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(walletBalancesRequest(buyer.address)),
      });
      const body = (await res.json()) as any;
      expect(res.status, JSON.stringify(body)).toBe(200);
      const settlement = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      return { body, settlement, gateway: g as TestGateway | undefined };
    },
  };
}

describe('batch-settlement on a 3-master Redis Cluster with two gateways', () => {
  it('200 calls over one channel alternating between the gateways, with three channels at once: each voucher charged once, claimed in a few transactions, nothing lost to a killed worker, and the money adds up to the base unit', {
    timeout: 300_000,
  }, async () => {
    const storage = createChannelStorage({ redis: g1.gateway.services.redis, keys: g1.gateway.services.keys });
    const views = channelChainViews(g1.gateway.services.paymentClient);
    const [main, ...side] = [pay.buyers[0], pay.buyers[1], pay.buyers[2], pay.buyers[3]];
    const treasuryBefore = await usdc(pay.treasury.address);
    const escrowBefore = await usdc(pay.batchSettlement);
    const buyersBefore = await Promise.all([main, ...side].map((b) => usdc(b.address)));
    const mainBuyer = channelBuyer(main);
    const sideBuyers = side.map(channelBuyer);

    // each channel opens with one deposit (one at a time: every gateway's facilitator is the same account)
    const accepted: { body: any; settlement: any; gateway?: TestGateway }[] = [];
    for (const b of [mainBuyer, ...sideBuyers]) accepted.push(await b.call());
    expect(accepted.map((a) => a.settlement.transaction).every((tx) => /^0x[0-9a-f]{64}$/.test(tx))).toBe(true);

    // the main channel's calls in sequence (the official client builds each voucher on the last), the
    // side channels' at the same time; each call goes to the other gateway than the channel's last one
    const run = async (b: ReturnType<typeof channelBuyer>, calls: number) => {
      for (let i = 0; i < calls; i++) accepted.push(await b.call());
    };
    const burst = (mainCalls: number, sideCalls: number) => Promise.all([run(mainBuyer, mainCalls), ...sideBuyers.map((b) => run(b, sideCalls))]);
    await burst(MAIN_CALLS / 2 - 1, SIDE_CALLS / 2 - 1);
    expect(accepted).toHaveLength(MAIN_CALLS / 2 + 3 * (SIDE_CALLS / 2));
    const vouchers = accepted.slice(4);
    expect(vouchers.every((a) => a.settlement.success && !a.settlement.transaction && a.settlement.extra?.chargedAmount === PRICE.toString())).toBe(true);
    // both gateways took vouchers
    expect(new Set(vouchers.map((a) => a.gateway)).size).toBe(2);

    // a worker pass claims every channel past the threshold (100 calls' worth): the main one
    const worker = workerPass();
    const claimTxs: string[] = [];
    const first = await worker.pass();
    claimTxs.push(...first.claims.map((c) => c.transaction));
    expect(first.claims).toHaveLength(1);

    // a voucher accepted on one gateway, sent to the other for another request: refused with x402's code;
    // for the same request: the stored answer, nothing charged twice
    const body = walletBalancesRequest(main.address);
    const r402 = await post(g1.executeUrl, body);
    const payload: PaymentPayload = await mainBuyer.client.createPaymentPayload(decodePaymentRequiredHeader(r402.headers.get('payment-required')!));
    const header = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) };
    const onFirst = await post(g1.executeUrl, body, header);
    expect(onFirst.status).toBe(200);
    const other = walletBalancesRequest(main.address, 'base');
    const reused = await post(g2.executeUrl, { ...other, input: { ...other.input, address: pay.buyers[7].address } }, header);
    expect(reused.status).toBe(402);
    expect(reused.body.reason).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    // (without a payment-identifier the resend cannot prove it is the payer: the receipt, 409 payment_already_used)
    const replay = await post(g2.executeUrl, body, header);
    expect(replay.status).toBe(409);
    // (a voucher names no transaction: nothing moved on chain yet)
    expect(replay.body).toMatchObject({ reason: 'payment_already_used', execution_id: onFirst.body.execution_id, payment: { tx_hash: null, amount: '1000' } });
    const settled = decodePaymentResponseHeader(onFirst.headers.get('payment-response')!);
    accepted.push({ body: onFirst.body, settlement: settled, gateway: g1 });
    // the client records the charge as the official fetch client does after an answer
    const p = payload.payload as { voucher: { channelId: Hex } };
    await updateChannelFromSettle(mainBuyer.storage, {
      server: { chargedAmount: settled.extra?.chargedAmount as string },
      local: { channelId: p.voucher.channelId, requestAmount: PRICE.toString() },
    });

    // the second half; then a worker whose claim reaches the chain dies (no answer, no bookkeeping, its
    // lease held until it expires)
    await burst(MAIN_CALLS / 2 - 1, SIDE_CALLS / 2);
    let claimSent!: () => void;
    const claimOnChain = new Promise<void>((resolve) => {
      claimSent = resolve;
    });
    const real = (workerPass() as unknown as { o: { facilitator: FacilitatorClient } }).o.facilitator;
    const dying: FacilitatorClient = {
      verify: (p, r) => real.verify(p, r),
      getSupported: () => real.getSupported(),
      settle: async (p, r) => {
        const result = await real.settle(p, r);
        if ((p.payload as { type: string }).type === 'claim') {
          claimSent();
          return new Promise(() => undefined);
        }
        return result;
      },
    };
    const doomed = workerPass({ facilitator: dying, leaseMs: 1_500, claimThreshold: 1n });
    void doomed.pass();
    await claimOnChain;

    const mainId = (await storage.list()).find((c) => c.channelConfig.payer.toLowerCase() === main.address.toLowerCase())!.channelId as Hex;
    expect((await views.channel(mainId)).totalClaimed).toBeGreaterThan(BigInt((await storage.get(mainId))!.totalClaimed));
    // a restarted worker takes over once the dead one's lease expired, and claims everything unclaimed
    const restarted = workerPass();
    let r = await restarted.pass({ full: true });
    while (r.skipped) {
      await new Promise((res) => setTimeout(res, 200));
      r = await restarted.pass({ full: true });
    }
    claimTxs.push(...r.claims.map((c) => c.transaction));

    // every accepted call charged once: the channels' charged totals are the accepted calls' prices
    const mine = (await storage.list()).filter((c) => [main, ...side].some((b) => b.address.toLowerCase() === c.channelConfig.payer.toLowerCase()));
    expect(mine).toHaveLength(4);
    const charged = mine.reduce((s, c) => s + BigInt(c.chargedCumulativeAmount), 0n);
    const answered = accepted.reduce((s, a) => s + BigInt(a.body.payment.amount), 0n);
    expect(new Set(accepted.map((a) => a.body.execution_id)).size).toBe(accepted.length);
    expect(charged).toBe(BigInt(accepted.length) * PRICE);
    expect(answered).toBe(charged);
    expect(BigInt(mine.find((c) => c.channelId === mainId)!.chargedCumulativeAmount)).toBe(BigInt(MAIN_CALLS) * PRICE);
    // each execution record names the voucher's amount, once
    const stored = await Promise.all(accepted.slice(0, 20).map((a) => g2.gateway.services.executions.get(a.body.execution_id)));
    expect(stored.every((e, i) => e?.payment?.amount === accepted[i].body.payment.amount)).toBe(true);

    // claimed in a few transactions (the killed worker's claim, on chain, is not in this list)
    expect(claimTxs.length).toBeGreaterThanOrEqual(2);
    expect(claimTxs.length).toBeLessThanOrEqual(4);
    // escrow, receiver and treasury: the chain agrees with storage to the base unit
    for (const c of mine) {
      expect(await views.channel(c.channelId as Hex)).toEqual({ balance: DEPOSIT, totalClaimed: BigInt(c.chargedCumulativeAmount) });
      expect(c.totalClaimed).toBe(c.chargedCumulativeAmount);
    }
    expect(await views.receiver(pay.treasury.address, pay.usdc)).toEqual({ totalClaimed: charged, totalSettled: charged });
    const treasuryGain = (await usdc(pay.treasury.address)) - treasuryBefore;
    const escrowGain = (await usdc(pay.batchSettlement)) - escrowBefore;
    const buyersPaid = (await Promise.all([main, ...side].map((b) => usdc(b.address)))).reduce((s, v, i) => s + (buyersBefore[i] - v), 0n);
    expect(treasuryGain).toBe(charged);
    expect(buyersPaid).toBe(4n * DEPOSIT);
    expect(escrowGain).toBe(4n * DEPOSIT - charged);
    expect(buyersPaid).toBe(treasuryGain + escrowGain);
  });
});

describe('exact on two gateways', () => {
  it('the same payment sent to both gateways at once runs once and is charged once', async () => {
    const buyer = pay.buyers[4];
    const body = walletBalancesRequest(buyer.address);
    const r402 = await post(g1.executeUrl, body);
    const payload = await officialPayload(buyer, decodePaymentRequiredHeader(r402.headers.get('payment-required')!));
    expect(payload.accepted.scheme).toBe('exact');
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
    const [buyerBefore, treasuryBefore] = await Promise.all([usdc(buyer.address), usdc(pay.treasury.address)]);
    const answers = await Promise.all([post(g1.executeUrl, body, header), post(g2.executeUrl, body, header)]);
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    // the other one is the stored answer, or the receipt of a payment in flight: never a second run
    for (const a of answers) if (a.status !== 200) expect(a.body.reason).toBe('payment_already_used');
    expect(new Set(ok.map((a) => a.body.execution_id)).size).toBe(1);
    // a replay on each gateway afterwards: the same execution
    for (const g of gateways()) {
      const again = await post(g.executeUrl, body, header);
      expect(again.status).toBe(200);
      expect(again.body.execution_id).toBe(ok[0].body.execution_id);
    }
    expect(buyerBefore - (await usdc(buyer.address))).toBe(PRICE);
    expect((await usdc(pay.treasury.address)) - treasuryBefore).toBe(PRICE);
  });
});

describe('upto on a routed call with two gateways', () => {
  const ID = 'intelligence.upper_market';
  const routedBody = (text: string) => ({ capability_id: ID, input: { text }, routing: { prefer: 'cheapest' } });
  const base = {
    description: 'Upper-cases text.',
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    output_schema: { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] },
    example_request: { text: 'probe' },
    timeout_ms: 2000,
  };
  const calls = (s: (typeof sellers)[number]) => s.server.calls.filter((c) => (c.body.input as { text?: string }).text !== 'probe').length;

  beforeAll(async () => {
    for (const [i, price] of ['0.001', '0.002', '0.003'].entries()) {
      const account = privateKeyToAccount(generatePrivateKey());
      const server = await startTestProvider(upperCaseAnswer);
      const offer = i === 0 ? { ...base, name: 'upper_market', price_usdc: price } : { ...base, capability_id: ID, price_usdc: price };
      const r = await registerProvider(g1.url, account, { name: `Seller ${i}`, endpoint: server.url, capabilities: [offer] });
      expect(r.status).toBe(201);
      server.setSecret(r.body.signing_secret);
      server.signAs(account, [ID]);
      sellers.push({ id: r.body.provider_id, account, server });
    }
    for (const g of gateways()) await g.gateway.services.providers.directory.reload();
    for (const s of sellers) for (let i = 0; i < 3; i++) await g1.gateway.prober.probeProvider(s.id);
    for (const g of gateways()) await g.gateway.services.providers.directory.reload();
    // the upto payer lets Permit2 move its USDC (once)
    const buyer = pay.buyers[5];
    const wallet = createWalletClient({ account: buyer, chain: pay.chain, transport: http(pay.rpcUrl) });
    const hash = await wallet.writeContract({ address: pay.usdc, abi: usdcAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] });
    await createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) }).waitForTransactionReceipt({ hash });
  });

  it('the answering offer is settled once; sent to both gateways at once and replayed on each, it runs nothing and settles nothing twice', async () => {
    const buyer = pay.buyers[5];
    const [cheap] = sellers;
    const body = routedBody('two gateways');
    // both gateways offer the route's highest price as the upto ceiling
    const requireds = await Promise.all(
      gateways().map(async (g) => decodePaymentRequiredHeader((await post(g.executeUrl, body)).headers.get('payment-required')!)),
    );
    for (const pr of requireds)
      expect(pr.accepts.map((a) => [a.scheme, a.amount])).toEqual([
        ['exact', '3000'],
        ['upto', '3000'],
      ]);
    const client = new x402Client().register('eip155:*', new UptoEvmScheme(toClientEvmSigner(buyer as never)));
    const payload = await client.createPaymentPayload(requireds[0]);
    expect(payload.accepted.scheme).toBe('upto');
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
    const heldBefore = BigInt((await g1.gateway.services.providerMoney!.balance(cheap.id)).held);
    const [buyerBefore, treasuryBefore, cheapCalls] = [await usdc(buyer.address), await usdc(pay.treasury.address), sellers.map(calls)];

    const answers = await Promise.all([post(g1.executeUrl, body, header), post(g2.executeUrl, body, header)]);
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of answers) if (a.status !== 200) expect(a.body.reason).toBe('payment_already_used');
    const first = ok[0].body;
    expect(first.provider.provider_id).toBe(cheap.id);
    expect(first.payment).toMatchObject({ amount: '1000', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(first.refund).toBeUndefined();
    // replays on each gateway: the receipt of the same execution (the payload carries no payment-identifier)
    for (const g of gateways()) {
      const again = await post(g.executeUrl, body, header);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ reason: 'payment_already_used', execution_id: first.execution_id });
    }
    // one run (of the cheapest offer), one settlement of its price, one provider credit, no refund
    expect(sellers.map(calls)).toEqual([cheapCalls[0] + 1, cheapCalls[1], cheapCalls[2]]);
    expect(buyerBefore - (await usdc(buyer.address))).toBe(1000n);
    expect((await usdc(pay.treasury.address)) - treasuryBefore).toBe(1000n);
    expect(BigInt((await g2.gateway.services.providerMoney!.balance(cheap.id)).held) - heldBefore).toBe(900n);
    expect(await readRefund(g2.gateway.services.redis, g2.gateway.services.keys, first.execution_id)).toBeUndefined();
    // and stays so: nothing settles later (the deferred recovery of either gateway finds nothing to do)
    for (const g of gateways()) expect(await g.gateway.services.paywall.recoverDeferred({ olderThanMs: 0 })).toEqual([]);
    await waitFor(
      () => usdc(buyer.address),
      (b) => buyerBefore - b === 1000n,
    );
  });
});
