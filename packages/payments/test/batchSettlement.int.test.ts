// The paywall's `batch-settlement` side (src/batchSettlement.ts) on a real anvil payment chain (our
// x402BatchSettlement at its canonical address, @acg/devnet) and a private Redis holding the channels
// (@acg/channels), with the official @x402/evm batch-settlement client, server scheme and facilitator
// (in the gateway's in-process facilitator), unchanged: a burst over one
// channel, replays and duplicates, reused, reordered and over-deposit vouchers, a failed run, a
// withdrawal about to complete. Balances are read on chain after the official channel manager claims.
import { resolveRedis, setupPaymentChain, startAnvil, usdcBalance, type AnvilInstance, type PaymentChainInfo, type RedisHandle } from '@acg/devnet';
import { RedisKeys } from '@acg/redis';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme, signVoucher } from '@x402/evm/batch-settlement/client';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import { createChannelStorage } from '@acg/channels';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createPublicClient, createWalletClient, http, parseAbi, publicActions, type HDAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchSettlementPayments, BatchSettlementReasons, type ChannelDecision } from '../src/batchSettlement.js';
import { createInProcessFacilitator } from '../src/facilitator.js';
import { requestHash } from '../src/hashing.js';

const PRICE = 1_000n; // 0.001 USDC per call
/** The two x402BatchSettlement functions read or called here (the interface x402 publishes). */
const x402BatchSettlementAbi = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function initiateWithdraw(ChannelConfig config, uint128 amount)',
]);

let anvil: AnvilInstance;
let pay: PaymentChainInfo;
let handle: RedisHandle;
let redis: Redis;
let facilitator: FacilitatorClient;
/** Calls the gateway side made to the facilitator (each one a chain round trip). */
const facilitatorCalls = { verify: 0, settle: 0 };
const keys = new RedisKeys(`batch-test:${Date.now()}:`);
const log = pino({ level: 'silent' });

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 });
  pay = await setupPaymentChain(anvil.rpcUrl);
  handle = await resolveRedis({ preferPrivate: true, log: () => undefined });
  redis = new Redis(handle.url);
  // the gateway's in-process facilitator (exact and batch-settlement; the facilitator account is the
  // channels' receiverAuthorizer), counting the calls the paywall makes to it
  const official = createInProcessFacilitator({ rpcUrl: pay.rpcUrl, chain: pay.chain, signer: pay.facilitator, networks: [pay.network] });
  facilitator = {
    verify: (p: PaymentPayload, r: PaymentRequirements) => {
      facilitatorCalls.verify++;
      return official.verify(p, r);
    },
    settle: (p: PaymentPayload, r: PaymentRequirements) => {
      facilitatorCalls.settle++;
      return official.settle(p, r);
    },
    getSupported: () => official.getSupported(),
  };
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  await handle?.stop();
  await anvil?.stop();
});

let storages = 0;
/** A fresh channel storage in Redis (the gateways' and the worker's, @acg/channels), under a key prefix of its own. */
const channelStorage = (): ChannelStorage => createChannelStorage({ redis, keys: new RedisKeys(`${keys.prefix}ch${++storages}:`) });

function payments(storage = channelStorage(), over: Partial<ConstructorParameters<typeof BatchSettlementPayments>[0]> = {}) {
  return new BatchSettlementPayments({
    facilitator,
    storage,
    terms: { network: pay.network, asset: pay.usdc, payTo: pay.treasury.address, assetName: 'USD Coin', assetVersion: '2' },
    redis,
    keys,
    log,
    duplicateWaitMs: 5_000,
    ...over,
  });
}

/** The official client of `buyer` (in-memory channel state), and its 402 → payload → answer loop. */
function buyerClient(buyer: HDAccount) {
  const publicClient = createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) });
  const client = new x402Client().register('eip155:*', new BatchClientScheme(toClientEvmSigner(buyer, publicClient)));
  return client;
}

const challenge = (requirements: PaymentRequirements): PaymentRequired => ({
  x402Version: 2,
  resource: { url: 'https://gateway.test/api/v1/execute', description: 'test', mimeType: 'application/json' },
  accepts: [requirements],
});

let calls = 0;
/** A distinct paid request (its own body), as the gateway's paidRequest builds it. */
function request(body: unknown = { call: ++calls }, price = PRICE) {
  return { requestHash: requestHash('POST', 'execute', body), operationId: `exe_${++calls}`, price, resourceUrl: 'https://gateway.test/api/v1/execute' };
}

function proceeded(d: ChannelDecision) {
  if (d.kind !== 'proceed') throw new Error(`expected proceed, got ${JSON.stringify(d)}`);
  return d.payment;
}

describe('batch-settlement vouchers on the paywall', () => {
  it('a burst over one channel: the first call deposits, the rest are vouchers checked off-chain; the claims add up to the prices', async () => {
    const buyer = pay.buyers[0];
    const storage = channelStorage();
    const p = payments(storage);
    const client = buyerClient(buyer);
    const requirements = await p.requirements(PRICE);
    expect(requirements).toMatchObject({ scheme: 'batch-settlement', amount: '1000', payTo: pay.treasury.address });
    expect(requirements.extra).toMatchObject({ receiverAuthorizer: pay.facilitator.address, withdrawDelay: 900, minDeposit: '10000' });
    const buyerBefore = await usdcBalance(pay.rpcUrl, buyer.address);
    const treasuryBefore = await usdcBalance(pay.rpcUrl, pay.treasury.address);

    const N = 25;
    const callsBefore = { ...facilitatorCalls };
    let runs = 0;
    const kinds: string[] = [];
    let deposited = 0n;
    for (let i = 0; i < N; i++) {
      const payload = await client.createPaymentPayload(challenge(requirements));
      const payment = proceeded(await p.decide(request(), payload));
      kinds.push(payment.kind);
      runs++;
      const answer = await p.complete(payment, { ok: true, body: { run: runs } });
      expect(answer.charged).toBe(true);
      const settle = decodePaymentResponseHeader(answer.headers['PAYMENT-RESPONSE']);
      expect(settle).toMatchObject({ success: true, extra: { chargedAmount: '1000' } });
      if (payment.kind === 'deposit') deposited += BigInt((payload.payload as { deposit: { amount: string } }).deposit.amount);
      await client.handlePaymentResponse({ paymentPayload: payload, requirements, settleResponse: settle });
    }
    expect(runs).toBe(N);
    // 10 calls' worth per deposit (the official minDeposit hint): a deposit, 9 vouchers, a top-up, ...
    expect(kinds.filter((k) => k === 'deposit').length).toBe(3);
    // only the deposits reached the facilitator (verify + settle on chain); the 22 vouchers were checked here, off-chain
    expect({ verify: facilitatorCalls.verify - callsBefore.verify, settle: facilitatorCalls.settle - callsBefore.settle }).toEqual({ verify: 3, settle: 3 });
    const [channel] = await storage.list();
    expect(channel.chargedCumulativeAmount).toBe((PRICE * BigInt(N)).toString());
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore - deposited);

    // The official channel manager claims and settles (the worker's job): one claim transaction for the 25 calls.
    const manager = p.scheme.createChannelManager(facilitator, pay.network, pay.usdc);
    const { claims, settle } = await manager.claimAndSettle();
    expect(claims).toEqual([{ vouchers: 1, transaction: expect.stringMatching(/^0x/) }]);
    expect(settle?.transaction).toMatch(/^0x/);
    expect(await usdcBalance(pay.rpcUrl, pay.treasury.address)).toBe(treasuryBefore + PRICE * BigInt(N));
    const onChain = (await createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) }).readContract({
      address: pay.batchSettlement,
      abi: x402BatchSettlementAbi,
      functionName: 'channels',
      args: [channel.channelId as `0x${string}`],
    })) as readonly [bigint, bigint];
    expect(onChain).toEqual([deposited, PRICE * BigInt(N)]);
  }, 120_000);

  it('a resent voucher never runs twice: a duplicate in flight waits for the answer; the payer gets it, a stranger the receipt; another request is refused', async () => {
    const buyer = pay.buyers[1];
    const p = payments();
    const client = buyerClient(buyer);
    const requirements = await p.requirements(PRICE);
    // open the channel
    const first = await client.createPaymentPayload(challenge(requirements));
    const opened = await p.complete(proceeded(await p.decide(request(), first)), { ok: true, body: 'opened' });
    await client.handlePaymentResponse({ paymentPayload: first, requirements, settleResponse: opened.settlement });

    const payload = await client.createPaymentPayload(challenge(requirements));
    expect((payload.payload as { type: string }).type).toBe('voucher');
    const req = request({ q: 'dup' });
    let runs = 0;
    const a = p.decide(req, payload);
    const b = p.decide({ ...req, operationId: 'exe_dup2', caller: buyer.address }, payload);
    // one proceeds; the other (a duplicate in flight) waits for its answer
    const race = await Promise.race([a.then((d) => ({ d, other: b })), b.then((d) => ({ d, other: a }))]);
    const payment = proceeded(race.d);
    runs++;
    await p.complete(payment, { ok: true, body: { answer: 42 } });
    const second = await race.other;
    if (second.kind === 'proceed') runs++;
    expect(runs).toBe(1);
    // the payer's resend (bearer token: `caller`) gets the stored answer, now and later
    expect(second).toMatchObject({ kind: 'replay' });
    const later = await p.decide({ ...req, operationId: 'exe_dup3', caller: buyer.address }, payload);
    expect(later).toMatchObject({ kind: 'replay', stored: { status: 200, body: { answer: 42 } } });
    // without proof of being the payer: the receipt, never the result
    const stranger = await p.decide({ ...req, operationId: 'exe_dup4' }, payload);
    expect(stranger.kind).toBe('replay');
    expect(JSON.stringify(stranger)).not.toContain('42');
    expect(JSON.stringify(stranger)).toContain('payment_already_used');
    // the same voucher for another request: the official scheme's refusal (the cumulative was charged), with the channel state to resync
    const reused = await p.decide(request({ q: 'other' }), payload);
    expect(reused).toMatchObject({ kind: 'refused', reason: BatchSettlementReasons.cumulativeAmountMismatch });
    const corrective = (reused as { corrective?: PaymentRequirements }).corrective;
    expect(corrective?.extra).toMatchObject({ channelState: { chargedCumulativeAmount: '2000' } });
  }, 120_000);

  it('a reordered voucher and an over-deposit voucher are refused with x402 reasons; the official client resyncs from the corrective 402', async () => {
    const buyer = pay.buyers[2];
    const storage = channelStorage();
    const p = payments(storage);
    const client = buyerClient(buyer);
    const requirements = await p.requirements(PRICE);
    const first = await client.createPaymentPayload(challenge(requirements));
    const opened = await p.complete(proceeded(await p.decide(request(), first)), { ok: true, body: 'opened' });
    await client.handlePaymentResponse({ paymentPayload: first, requirements, settleResponse: opened.settlement });
    const base = first.payload as { channelConfig: object; voucher: { channelId: `0x${string}` }; deposit: { amount: string } };
    const signer = toClientEvmSigner(buyer, createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) }));
    const voucherPayload = async (cumulative: bigint, accepted: PaymentRequirements): Promise<PaymentPayload> => ({
      x402Version: 2,
      accepted,
      payload: {
        type: 'voucher',
        channelConfig: base.channelConfig,
        voucher: await signVoucher(signer, base.voucher.channelId, cumulative.toString(), pay.network),
      },
    });

    // skipping ahead (cumulative 3000 while 1000 is charged): reordered
    const ahead = await p.decide(request(), await voucherPayload(3_000n, requirements));
    expect(ahead).toMatchObject({ kind: 'refused', reason: BatchSettlementReasons.cumulativeAmountMismatch });
    // behind (the charged total itself, 1000): reused
    const behind = await p.decide(request(), await voucherPayload(1_000n, requirements));
    expect(behind).toMatchObject({ kind: 'refused', reason: BatchSettlementReasons.cumulativeAmountMismatch });
    // the right base, but more than the deposit holds
    const deposit = BigInt(base.deposit.amount);
    const big = await p.requirements(deposit);
    const over = await p.decide(request(undefined, deposit), await voucherPayload(1_000n + deposit, big));
    expect(over).toMatchObject({ kind: 'refused', reason: BatchSettlementReasons.cumulativeExceedsBalance });
    expect((await storage.list())[0]).toMatchObject({ chargedCumulativeAmount: '1000' });
    expect((await storage.list())[0].pendingRequest).toBeUndefined();

    // the official client, told by the corrective 402, signs the right next voucher
    const fresh = buyerClient(buyer); // lost its local state
    const corrective = {
      ...challenge(requirements),
      error: BatchSettlementReasons.cumulativeAmountMismatch,
      accepts: [(ahead as { corrective: PaymentRequirements }).corrective],
    };
    expect(await fresh.handlePaymentResponse({ paymentPayload: first, requirements, paymentRequired: corrective })).toEqual({ recovered: true });
    const next = await fresh.createPaymentPayload(challenge(requirements));
    expect(next.payload).toMatchObject({ type: 'voucher', voucher: { maxClaimableAmount: '2000' } });
    expect((await p.complete(proceeded(await p.decide(request(), next)), { ok: true, body: 'ok' })).charged).toBe(true);
  }, 120_000);

  it('a failed run is not charged: the channel reservation is cancelled (a deposit never sent) and the same voucher is accepted again', async () => {
    const buyer = pay.buyers[3];
    const storage = channelStorage();
    const p = payments(storage);
    const client = buyerClient(buyer);
    const requirements = await p.requirements(PRICE);
    const buyerBefore = await usdcBalance(pay.rpcUrl, buyer.address);
    // the first call's run fails: its deposit is never sent, nothing charged
    const first = await client.createPaymentPayload(challenge(requirements));
    expect(first.payload).toMatchObject({ type: 'deposit', voucher: { maxClaimableAmount: '1000' } });
    const failedDeposit = await p.complete(proceeded(await p.decide(request(), first)), { ok: false, status: 500, body: { title: 'boom' } });
    expect(failedDeposit).toMatchObject({ status: 500, charged: false });
    expect(failedDeposit.headers['PAYMENT-RESPONSE']).toBeUndefined();
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore);
    // the client saw no PAYMENT-RESPONSE: it sends the same deposit again (retry), which now runs and is charged
    const ok = await p.complete(proceeded(await p.decide(request(), first)), { ok: true, body: 'ok' });
    expect(ok.charged).toBe(true);
    await client.handlePaymentResponse({ paymentPayload: first, requirements, settleResponse: ok.settlement });
    expect((await storage.list())[0]).toMatchObject({ chargedCumulativeAmount: '1000' });
    // a voucher whose run fails: cancelled, not charged, the same voucher runs again (for a retry of the request)
    const v = await client.createPaymentPayload(challenge(requirements));
    const retried = request({ q: 'retry' });
    const failed = await p.complete(proceeded(await p.decide(retried, v)), { ok: false, status: 502, body: { title: 'upstream' } });
    expect(failed.charged).toBe(false);
    expect((await storage.list())[0]).toMatchObject({ chargedCumulativeAmount: '1000' });
    expect((await storage.list())[0].pendingRequest).toBeUndefined();
    const retry = await p.complete(proceeded(await p.decide({ ...retried, operationId: 'exe_retry' }, v)), { ok: true, body: 'ok' });
    expect(retry.charged).toBe(true);
    expect((await storage.list())[0]).toMatchObject({ chargedCumulativeAmount: '2000' });
  }, 120_000);

  it('stops taking vouchers on a channel whose timed withdrawal completes within the margin', async () => {
    const buyer = pay.buyers[4];
    const storage = channelStorage();
    // a mirror never trusted (every voucher read on chain by the facilitator) so the withdrawal is seen at once
    const margin900 = payments(storage, { onchainStateTtlMs: 0, withdrawalMarginSeconds: 900 });
    const margin0 = payments(storage, { onchainStateTtlMs: 0, withdrawalMarginSeconds: 0 });
    const client = buyerClient(buyer);
    const requirements = await margin900.requirements(PRICE);
    const first = await client.createPaymentPayload(challenge(requirements));
    const opened = await margin900.complete(proceeded(await margin900.decide(request(), first)), { ok: true, body: 'opened' });
    await client.handlePaymentResponse({ paymentPayload: first, requirements, settleResponse: opened.settlement });
    const config = (first.payload as { channelConfig: Record<string, unknown> }).channelConfig;
    const wallet = createWalletClient({ account: buyer, chain: pay.chain, transport: http(pay.rpcUrl) }).extend(publicActions);
    const hash = await wallet.writeContract({
      address: pay.batchSettlement,
      abi: x402BatchSettlementAbi,
      functionName: 'initiateWithdraw',
      args: [config as never, 1_000n],
    });
    expect((await wallet.waitForTransactionReceipt({ hash })).status).toBe('success');

    const v = await client.createPaymentPayload(challenge(requirements));
    // 900 s delay, 900 s margin: refused at once, and the channel is not left reserved
    expect(await margin900.decide(request({ w: 1 }), v)).toMatchObject({ kind: 'refused', reason: BatchSettlementReasons.withdrawalPending });
    expect((await storage.list())[0].pendingRequest).toBeUndefined();
    // with no margin the withdrawal is 900 s away: still accepted
    const accepted = await margin0.complete(proceeded(await margin0.decide(request({ w: 1 }), v)), { ok: true, body: 'ok' });
    expect(accepted.charged).toBe(true);
  }, 120_000);
});
