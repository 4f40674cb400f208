// The `batch-settlement` strategy (src/schemes/batchSettlement.ts) behind the one Paywall, on a real anvil
// payment chain (our x402BatchSettlement at its canonical address, @acg/devnet) and a private Redis holding
// the reservations and the channels (@acg/channels), with the official @x402/evm batch-settlement client,
// server scheme and facilitator (in the gateway's in-process facilitator), unchanged: a burst over one
// channel, replays and a duplicate in flight, reused, reordered and over-deposit vouchers, failed runs, a
// withdrawal about to complete. Balances are read on chain after the official channel manager claims.
import { createChannelStorage } from '@acg/channels';
import { resolveRedis, setupPaymentChain, startAnvil, usdcBalance, type AnvilInstance, type PaymentChainInfo, type RedisHandle } from '@acg/devnet';
import { RedisKeys } from '@acg/redis';
import { RefundQueue } from '@acg/treasury';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme, signVoucher } from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme, type ChannelStorage } from '@x402/evm/batch-settlement/server';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createPublicClient, createWalletClient, http, parseAbi, publicActions, type HDAccount, type PublicClient } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessFacilitator } from '../src/facilitator.js';
import { requestHash } from '../src/hashing.js';
import { Paywall, type Decision, type Outcome, type PaidAnswer, type PaidRequest } from '../src/paywall.js';
import { BatchSettlementReasons, batchSettlementScheme, type BatchSettlementSchemeOptions } from '../src/schemes/batchSettlement.js';

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
let refundConnection: Redis;
let publicClient: PublicClient;
let facilitator: FacilitatorClient;
/** Calls the paywall made to the facilitator (each one a chain round trip). */
const facilitatorCalls = { verify: 0, settle: 0 };
const log = pino({ level: 'silent' });

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 });
  pay = await setupPaymentChain(anvil.rpcUrl);
  handle = await resolveRedis({ preferPrivate: true, log: () => undefined });
  redis = new Redis(handle.url);
  refundConnection = new Redis(handle.url, { maxRetriesPerRequest: null });
  publicClient = createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) }) as PublicClient;
  // the gateway's in-process facilitator (exact and batch-settlement; its account is the channels' receiverAuthorizer)
  const inProcess = createInProcessFacilitator({ rpcUrl: pay.rpcUrl, chain: pay.chain, signer: pay.facilitator, networks: [pay.network] });
  facilitator = {
    verify: (p, r) => {
      facilitatorCalls.verify++;
      return inProcess.verify(p, r);
    },
    settle: (p, r) => {
      facilitatorCalls.settle++;
      return inProcess.settle(p, r);
    },
    getSupported: () => inProcess.getSupported(),
  };
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  refundConnection?.disconnect();
  await handle?.stop();
  await anvil?.stop();
});

let prefixes = 0;
/** A fresh prefix of keys (reservations, channels) for one test. */
const freshKeys = () => new RedisKeys(`batch-test:${process.pid}:${++prefixes}:`);

/** A paywall offering `batch-settlement` beside `exact`, its channels in Redis (`storage`, @acg/channels). */
function paywallWith(keys: RedisKeys, storage: ChannelStorage, over: Partial<BatchSettlementSchemeOptions> = {}) {
  return new Paywall({
    redis,
    keys,
    facilitator,
    publicClient,
    refunds: new RefundQueue(redis, keys, refundConnection),
    log,
    duplicateWaitMs: 5_000,
    terms: { network: pay.network, asset: pay.usdc, payTo: pay.treasury.address, assetName: 'USD Coin', assetVersion: '2' },
    schemes: [batchSettlementScheme({ storage, ...over })],
  });
}

function setup(over: Partial<BatchSettlementSchemeOptions> = {}) {
  const keys = freshKeys();
  const storage = createChannelStorage({ redis, keys });
  return { keys, storage, paywall: paywallWith(keys, storage, over) };
}

/** The official client of `buyer` (its channel state in memory), paying with batch-settlement only. */
function buyerClient(buyer: HDAccount) {
  return new x402Client().register('eip155:*', new BatchClientScheme(toClientEvmSigner(buyer, publicClient as never)));
}

let calls = 0;
/** A paid call of `POST /api/v1/execute` with its own body, offering batch-settlement. */
function request(payload: unknown, body: unknown = { call: ++calls }, extra: Partial<PaidRequest> = {}): PaidRequest {
  return {
    resourceUrl: 'https://gateway.test/api/v1/execute',
    description: 'Execute test.echo',
    price: PRICE,
    route: 'execute',
    requestHash: requestHash('POST', 'execute', body),
    operationId: `exe_${++calls}`,
    paymentPayload: payload,
    schemes: ['batch-settlement'],
    ...extra,
  };
}

/** The 402 of an unpaid call (its `PaymentRequired`). */
async function challengeOf(paywall: Paywall, price = PRICE): Promise<PaymentRequired> {
  const d = await paywall.decide(request(null, undefined, { price }));
  if (d.kind !== 'challenge') throw new Error(`expected a challenge, got ${d.kind}`);
  return d.response.paymentRequired;
}

const ok = (body: unknown): Outcome => ({ ok: true, body });
const failed = (status: number): Outcome => ({ ok: false, status, body: { title: 'failed' }, refund: true });

/** Runs a decision that proceeds: the operation (counted in `runs`) with `outcome`, then complete. */
async function run(paywall: Paywall, d: Decision, outcome: Outcome, runs?: { n: number }): Promise<PaidAnswer> {
  if (d.kind !== 'proceed') throw new Error(`expected proceed, got ${JSON.stringify(d).slice(0, 300)}`);
  const settled = await d.plan.settlement;
  if (settled.kind !== 'settled') throw new Error('expected settled');
  if (runs) runs.n++;
  return paywall.complete(settled, Promise.resolve(outcome));
}

/** The x402 reason of a refused decision, and its batch-settlement `accepts` entry. */
function refusal(d: Decision): { reason?: string; batch?: PaymentRequirements } {
  if (d.kind !== 'refused' || !('response' in d)) return {};
  return { reason: d.response.body.reason, batch: d.response.paymentRequired.accepts.find((a) => a.scheme === 'batch-settlement') };
}

describe('batch-settlement behind the paywall', () => {
  it('the 402 offers exact first and batch-settlement beside it; a burst over one channel is checked off-chain and the claims add up to the prices', async () => {
    const { paywall, storage } = setup();
    const buyer = pay.buyers[0];
    const client = buyerClient(buyer);
    const challenge = await challengeOf(paywall);
    expect(challenge.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    const requirements = challenge.accepts[1];
    expect(requirements).toMatchObject({ amount: '1000', payTo: pay.treasury.address, maxTimeoutSeconds: 60 });
    expect(requirements.extra).toMatchObject({ receiverAuthorizer: pay.facilitator.address, withdrawDelay: 900, minDeposit: '10000' });
    const buyerBefore = await usdcBalance(pay.rpcUrl, buyer.address);
    const treasuryBefore = await usdcBalance(pay.rpcUrl, pay.treasury.address);

    const N = 25;
    const before = { ...facilitatorCalls };
    const runs = { n: 0 };
    let deposited = 0n;
    let deposits = 0;
    for (let i = 0; i < N; i++) {
      const payload = await client.createPaymentPayload(challenge);
      const answer = await run(paywall, await paywall.decide(request(payload)), ok({ i }), runs);
      expect(answer.status).toBe(200);
      const settle = decodePaymentResponseHeader(answer.headers['PAYMENT-RESPONSE']);
      expect(settle).toMatchObject({ success: true, extra: { chargedAmount: '1000' } });
      const p = payload.payload as { type: string; deposit?: { amount: string } };
      if (p.type === 'deposit') {
        deposits++;
        deposited += BigInt(p.deposit!.amount);
        expect(settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      } else expect(settle.transaction).toBe('');
      await client.handlePaymentResponse({ paymentPayload: payload, requirements, settleResponse: settle });
    }
    expect(runs.n).toBe(N);
    // 10 calls' worth per deposit (the official minDeposit hint): a deposit, 9 vouchers, a top-up, ...
    expect(deposits).toBe(3);
    // only the deposits reached the facilitator (verify, then the deposit on chain); 22 vouchers were checked here
    expect({ verify: facilitatorCalls.verify - before.verify, settle: facilitatorCalls.settle - before.settle }).toEqual({ verify: 3, settle: 3 });
    const [channel] = await storage.list();
    expect(channel.chargedCumulativeAmount).toBe((PRICE * BigInt(N)).toString());
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore - deposited);

    // The official channel manager claims and settles (the worker's job): one claim transaction for the 25 calls.
    const manager = new BatchSettlementEvmScheme(pay.treasury.address, { storage }).createChannelManager(facilitator, pay.network, pay.usdc);
    const { claims, settle } = await manager.claimAndSettle();
    expect(claims).toEqual([{ vouchers: 1, transaction: expect.stringMatching(/^0x/) }]);
    expect(settle?.transaction).toMatch(/^0x/);
    expect(await usdcBalance(pay.rpcUrl, pay.treasury.address)).toBe(treasuryBefore + PRICE * BigInt(N));
    const onChain = await publicClient.readContract({
      address: pay.batchSettlement,
      abi: x402BatchSettlementAbi,
      functionName: 'channels',
      args: [channel.channelId as `0x${string}`],
    });
    expect(onChain).toEqual([deposited, PRICE * BigInt(N)]);
  }, 120_000);

  it('a resent voucher never runs twice: a duplicate in flight waits for the answer; the payer gets it, a stranger the receipt; another request gets the x402 mismatch', async () => {
    const { paywall } = setup();
    const buyer = pay.buyers[1];
    const client = buyerClient(buyer);
    const challenge = await challengeOf(paywall);
    const requirements = challenge.accepts[1];
    const first = await client.createPaymentPayload(challenge);
    const opened = await run(paywall, await paywall.decide(request(first)), ok('opened'));
    await client.handlePaymentResponse({ paymentPayload: first, requirements, settleResponse: opened.settlement });

    const payload = await client.createPaymentPayload(challenge);
    expect(payload.payload).toMatchObject({ type: 'voucher', voucher: { maxClaimableAmount: '2000' } });
    const body = { q: 'dup' };
    const runs = { n: 0 };
    const d1 = await paywall.decide(request(payload, body));
    expect(d1.kind).toBe('proceed');
    // the same voucher for the same request while the first runs: it waits, then gets the answer
    const duplicate = paywall.decide(request(payload, body, { caller: buyer.address }));
    await run(paywall, d1, ok({ answer: 42 }), runs);
    const d2 = await duplicate;
    if (d2.kind === 'proceed') runs.n++;
    expect(runs.n).toBe(1);
    expect(d2).toMatchObject({ kind: 'replay', response: { status: 200, body: { answer: 42 }, replayed: true } });
    // without proof of being the payer: the receipt (409 payment_already_used), never the result
    const stranger = await paywall.decide(request(payload, body));
    expect(stranger.kind).toBe('replay');
    expect(JSON.stringify(stranger)).toContain('payment_already_used');
    expect(JSON.stringify(stranger)).not.toContain('"answer":42');
    // the same voucher for another request: the official scheme's cumulative mismatch, with the channel state to resync
    const reused = refusal(await paywall.decide(request(payload, { q: 'other' })));
    expect(reused.reason).toBe(BatchSettlementReasons.cumulativeAmountMismatch);
    expect(reused.batch?.extra).toMatchObject({ channelState: { chargedCumulativeAmount: '2000' }, voucherState: { signedMaxClaimable: '2000' } });
  }, 120_000);

  it("a voucher call's reservation is written three times: reserved pending, the intent settling before the channel is charged, then completed with the answer (no separate settled mark)", async () => {
    const { paywall, storage } = setup();
    const buyer = pay.buyers[5];
    const client = buyerClient(buyer);
    const challenge = await challengeOf(paywall);
    const requirements = challenge.accepts[1];
    const first = await client.createPaymentPayload(challenge);
    const opened = await run(paywall, await paywall.decide(request(first)), ok('opened'));
    await client.handlePaymentResponse({ paymentPayload: first, requirements, settleResponse: opened.settlement });

    const payload = await client.createPaymentPayload(challenge);
    expect(payload.payload).toMatchObject({ type: 'voucher', voucher: { maxClaimableAmount: '2000' } });
    // every command the private Redis runs meanwhile, those inside scripts included (MONITOR)
    const monitor = await redis.monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => seen.push(args));
    let stateWhileRunning: string | null = null;
    let chargedWhileRunning: string | undefined;
    const d = await paywall.decide(request(payload));
    if (d.kind !== 'proceed') throw new Error(`expected proceed, got ${d.kind}`);
    const settled = await d.plan.settlement;
    if (settled.kind !== 'settled') throw new Error('expected settled');
    const authKey = settled.payment.authorization!.key;
    const answer = await paywall.complete(
      settled,
      (async () => {
        stateWhileRunning = await redis.hget(authKey, 'state');
        chargedWhileRunning = (await storage.get((payload.payload as { voucher: { channelId: string } }).voucher.channelId))?.chargedCumulativeAmount;
        return ok({ answer: 7 });
      })(),
    );
    expect(answer.status).toBe(200);
    // MONITOR lists a command when it ran: a PING through the client queue comes back after every write above
    await redis.ping();
    await new Promise((r) => setTimeout(r, 50));
    monitor.disconnect();

    // while the operation ran the voucher was reserved, not charged
    expect(stateWhileRunning).toBe('pending');
    expect(chargedWhileRunning).toBe('1000');
    // the states written to the reservation, in order (inside the reserve and transition scripts)
    const states = seen.filter((a) => a[0].toLowerCase() === 'hset' && a[1] === authKey).map((a) => a[a.indexOf('state') + 1]);
    expect(states).toEqual(['pending', 'settling', 'completed']);
    // each in one HSET, the settling intent before the channel record is charged (the official storage's compare-and-set)
    const intent = seen.findIndex((a) => a[0].toLowerCase() === 'hset' && a[1] === authKey && a.includes('settling'));
    const lastChannelWrite = seen
      .map((a, i) => (a[0].toLowerCase() === 'evalsha' && a.some((x) => x.includes(':ch:')) ? i : -1))
      .reduce((a, b) => Math.max(a, b), -1);
    expect(intent).toBeGreaterThan(-1);
    expect(lastChannelWrite).toBeGreaterThan(intent);
    expect(await redis.hmget(authKey, 'state', 'amount', 'tx_hash', 'settle_amount')).toEqual(['completed', '1000', '0x', '1000']);
    expect(JSON.parse((await redis.hget(authKey, 'response'))!)).toMatchObject({ status: 200, body: { answer: 7 } });
    const [channel] = await storage.list();
    expect(channel.chargedCumulativeAmount).toBe('2000');
  }, 120_000);

  it('a reordered voucher and an over-deposit voucher are refused with x402 reasons; the official client resyncs from the corrective 402', async () => {
    const { paywall, storage } = setup();
    const buyer = pay.buyers[2];
    const client = buyerClient(buyer);
    const challenge = await challengeOf(paywall);
    const requirements = challenge.accepts[1];
    const first = await client.createPaymentPayload(challenge);
    const opened = await run(paywall, await paywall.decide(request(first)), ok('opened'));
    await client.handlePaymentResponse({ paymentPayload: first, requirements, settleResponse: opened.settlement });
    const base = first.payload as { channelConfig: object; voucher: { channelId: `0x${string}` }; deposit: { amount: string } };
    const signer = toClientEvmSigner(buyer, publicClient as never);
    const voucher = async (cumulative: bigint, accepted: PaymentRequirements): Promise<PaymentPayload> => ({
      x402Version: 2,
      accepted,
      payload: {
        type: 'voucher',
        channelConfig: base.channelConfig,
        voucher: await signVoucher(signer, base.voucher.channelId, cumulative.toString(), pay.network),
      },
    });

    // skipping ahead (cumulative 3000 while 1000 is charged): reordered
    const ahead = refusal(await paywall.decide(request(await voucher(3_000n, requirements))));
    expect(ahead.reason).toBe(BatchSettlementReasons.cumulativeAmountMismatch);
    expect(ahead.batch?.extra).toMatchObject({ channelState: { chargedCumulativeAmount: '1000' } });
    // behind (the charged total itself): reused
    expect(refusal(await paywall.decide(request(await voucher(1_000n, requirements)))).reason).toBe(BatchSettlementReasons.cumulativeAmountMismatch);
    // the right base, but more than the deposit holds
    const deposit = BigInt(base.deposit.amount);
    const big = (await challengeOf(paywall, deposit)).accepts[1];
    const over = await paywall.decide(request(await voucher(1_000n + deposit, big), undefined, { price: deposit }));
    expect(refusal(over).reason).toBe(BatchSettlementReasons.cumulativeExceedsBalance);
    const [channel] = await storage.list();
    expect(channel.chargedCumulativeAmount).toBe('1000');
    expect(channel.pendingRequest).toBeUndefined();

    // a client that lost its state, told by the corrective 402, signs the right next voucher
    const fresh = buyerClient(buyer);
    const corrective = { ...challenge, error: BatchSettlementReasons.cumulativeAmountMismatch, accepts: [ahead.batch!] };
    expect(await fresh.handlePaymentResponse({ paymentPayload: first, requirements, paymentRequired: corrective })).toEqual({ recovered: true });
    const next = await fresh.createPaymentPayload(challenge);
    expect(next.payload).toMatchObject({ type: 'voucher', voucher: { maxClaimableAmount: '2000' } });
    expect((await run(paywall, await paywall.decide(request(next)), ok('ok'))).status).toBe(200);
  }, 120_000);

  it('a failed run is not charged: no deposit sent, the channel reservation cancelled, and the same voucher runs again', async () => {
    const { paywall, storage } = setup();
    const buyer = pay.buyers[3];
    const client = buyerClient(buyer);
    const challenge = await challengeOf(paywall);
    const requirements = challenge.accepts[1];
    const buyerBefore = await usdcBalance(pay.rpcUrl, buyer.address);
    // the first call's run fails: its deposit is never sent, nothing charged, no PAYMENT-RESPONSE
    const first = await client.createPaymentPayload(challenge);
    expect(first.payload).toMatchObject({ type: 'deposit', voucher: { maxClaimableAmount: '1000' } });
    const failedDeposit = await run(paywall, await paywall.decide(request(first)), failed(500));
    expect(failedDeposit.status).toBe(500);
    expect(failedDeposit.headers['PAYMENT-RESPONSE']).toBeUndefined();
    expect(await usdcBalance(pay.rpcUrl, buyer.address)).toBe(buyerBefore);
    // the same deposit again (a retry of the call): it runs now and is charged
    const opened = await run(paywall, await paywall.decide(request(first)), ok('ok'));
    expect(opened.status).toBe(200);
    await client.handlePaymentResponse({ paymentPayload: first, requirements, settleResponse: opened.settlement });
    expect((await storage.list())[0].chargedCumulativeAmount).toBe('1000');

    // a voucher whose run fails: cancelled, not charged; the same voucher (a retry) runs and is charged once
    const v = await client.createPaymentPayload(challenge);
    const body = { q: 'retry' };
    expect((await run(paywall, await paywall.decide(request(v, body)), failed(502))).status).toBe(502);
    const [afterFailure] = await storage.list();
    expect(afterFailure.chargedCumulativeAmount).toBe('1000');
    expect(afterFailure.pendingRequest).toBeUndefined();
    expect((await run(paywall, await paywall.decide(request(v, body)), ok('ok'))).status).toBe(200);
    expect((await storage.list())[0].chargedCumulativeAmount).toBe('2000');
  }, 120_000);

  it('stops taking vouchers on a channel whose timed withdrawal completes within the margin', async () => {
    const keys = freshKeys();
    const storage = createChannelStorage({ redis, keys });
    // a mirror never trusted (every voucher read on chain by the facilitator) so the withdrawal is seen at once
    const margin900 = paywallWith(keys, storage, { onchainStateTtlMs: 0, withdrawalMarginSeconds: 900 });
    const margin0 = paywallWith(keys, storage, { onchainStateTtlMs: 0, withdrawalMarginSeconds: 0 });
    const buyer = pay.buyers[4];
    const client = buyerClient(buyer);
    const challenge = await challengeOf(margin900);
    const requirements = challenge.accepts[1];
    const first = await client.createPaymentPayload(challenge);
    const opened = await run(margin900, await margin900.decide(request(first)), ok('opened'));
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

    const v = await client.createPaymentPayload(challenge);
    // 900 s delay, 900 s margin: refused at once, and the channel is not left reserved
    expect(refusal(await margin900.decide(request(v, { w: 1 }))).reason).toBe(BatchSettlementReasons.withdrawalPending);
    expect((await storage.list())[0].pendingRequest).toBeUndefined();
    // with no margin the withdrawal is 900 s away: still accepted
    expect((await run(margin0, await margin0.decide(request(v, { w: 1 })), ok('ok'))).status).toBe(200);
  }, 120_000);
});
