import { resolveRedis, type RedisHandle } from '@acg/devnet';
import { isRedisUnavailable, RedisKeys } from '@acg/redis';
import { ProblemError } from '@acg/schemas';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { Redis } from 'ioredis';
import pino from 'pino';
import type { PublicClient } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentKeys } from '../src/commands/keys.js';
import { requestHash } from '../src/hashing.js';
import { Paywall, type Decision, type PaidRequest, type Settled, type SettlementPlan } from '../src/paywall.js';
import { readRefund, RefundQueue } from '@acg/treasury';

/**
 * The paywall's state machine alone (docs/architecture.md "The paid path"): decide → settlement →
 * complete, on a private Redis, with a facilitator and a payment chain that are local stand-ins
 * speaking their interfaces (x402 `FacilitatorClient`; the token's `authorizationState`). Each test
 * drives one transition: challenge, reserve and settle, replay by the payer and by a stranger,
 * conflict, settle refused, settle lost (then reconciled), run failed and refunded, store outage.
 */

const NETWORK = 'eip155:8453' as const;
const ASSET = `0x${'a'.repeat(40)}` as const;
const PAY_TO = `0x${'b'.repeat(40)}` as const;
const PAYER = `0x${'c'.repeat(40)}` as const;

/** The payment chain as the paywall reads it: which authorizations were used. */
class FakeChain {
  readonly used = new Set<string>();
  readonly client = {
    readContract: async ({ args }: { args: [string, string] }) => this.used.has(args[1].toLowerCase()),
    getTransaction: async () => {
      throw Object.assign(new Error('transaction not found'), { name: 'TransactionNotFoundError' });
    },
    getLogs: async () => [],
  } as unknown as PublicClient;
}

/** A facilitator whose verify and settle answer as told: `ok`, `refuse` (an x402 reason) or `lose` (settle's outcome never seen). */
class FakeFacilitator implements FacilitatorClient {
  settleMode: 'ok' | 'refuse' | 'lose' = 'ok';
  settles = 0;
  constructor(private readonly chain: FakeChain) {}
  async verify(): Promise<VerifyResponse> {
    return { isValid: true, payer: PAYER };
  }
  async settle(payload: PaymentPayload): Promise<SettleResponse> {
    this.settles++;
    const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce.toLowerCase();
    if (this.settleMode === 'refuse') return { success: false, errorReason: 'insufficient_funds', transaction: '', network: NETWORK };
    // broadcast and mined, but the answer is lost on the way back
    this.chain.used.add(nonce);
    if (this.settleMode === 'lose') throw new Error('socket hang up');
    return { success: true, transaction: `0x${'d'.repeat(64)}`, network: NETWORK, payer: PAYER };
  }
  async getSupported() {
    return { kinds: [{ x402Version: 2, scheme: 'exact', network: NETWORK }], extensions: [], signers: {} };
  }
}

let handle: RedisHandle;
let redis: Redis;
let refundConnection: Redis;
const keys = new RedisKeys('paywall-test:');
const chain = new FakeChain();
const facilitator = new FakeFacilitator(chain);
let paywall: Paywall;

beforeAll(async () => {
  handle = await resolveRedis({ preferPrivate: true, log: () => undefined });
  redis = new Redis(handle.url);
  refundConnection = new Redis(handle.url, { maxRetriesPerRequest: null });
  paywall = new Paywall({
    redis,
    keys,
    facilitator,
    publicClient: chain.client,
    refunds: new RefundQueue(redis, keys, refundConnection),
    log: pino({ level: 'silent' }),
    duplicateWaitMs: 200,
    terms: { network: NETWORK, asset: ASSET, payTo: PAY_TO, assetName: 'USD Coin', assetVersion: '2' },
  });
});

afterAll(async () => {
  redis?.disconnect();
  refundConnection?.disconnect();
  await handle?.stop();
});

let nonces = 0;
/** A fresh EIP-3009 payment of `price` for the paywall's requirements (the stand-in facilitator does not check the signature). */
function payment(price: bigint): PaymentPayload {
  const accepted: PaymentRequirements = paywall.requirements(price);
  const now = Math.floor(Date.now() / 1000);
  return {
    x402Version: 2,
    accepted,
    payload: {
      signature: `0x${'1'.repeat(130)}`,
      authorization: {
        from: PAYER,
        to: PAY_TO,
        value: String(price),
        validAfter: '0',
        validBefore: String(now + 300),
        nonce: `0x${(++nonces).toString(16).padStart(64, '0')}`,
      },
    },
  };
}

function request(body: unknown, paymentPayload: unknown, extra: Partial<PaidRequest> = {}): PaidRequest {
  return {
    resourceUrl: 'https://gateway.test/api/v1/execute',
    description: 'Execute test.echo',
    price: 1000n,
    route: 'execute',
    requestHash: requestHash('POST', 'execute', body),
    operationId: `exe_${String(++nonces).padStart(26, '0')}`,
    paymentPayload,
    ...extra,
  };
}

function proceed(d: Decision): SettlementPlan {
  if (d.kind !== 'proceed') throw new Error(`expected proceed, got ${d.kind}`);
  return d.plan;
}

async function settled(plan: SettlementPlan): Promise<Settled> {
  const s = await plan.settlement;
  if (s.kind !== 'settled') throw new Error('expected settled');
  return s;
}

/** One paid call run to its end with `body` as its answer. */
async function paidCall(req: PaidRequest, answer: unknown) {
  const plan = proceed(await paywall.decide(req));
  const s = await settled(plan);
  return { plan, settled: s, answer: await paywall.complete(s, Promise.resolve({ ok: true as const, body: answer })) };
}

describe('Paywall.decide / complete', () => {
  it('challenge: no payment is answered with the 402 and nothing is reserved', async () => {
    const d = await paywall.decide(request({ a: 1 }, null));
    expect(d.kind).toBe('challenge');
    if (d.kind !== 'challenge') return;
    expect(d.response.status).toBe(402);
    expect(d.response.paymentRequired.accepts[0]).toMatchObject({ amount: '1000', payTo: PAY_TO, network: NETWORK });
    expect(await redis.zcard(paymentKeys.authorizationsInFlight(keys))).toBe(0);
  });

  it('reserve → settle → complete: the plan names the payer and price, may start early, and the answer carries the settlement', async () => {
    facilitator.settleMode = 'ok';
    const req = request({ a: 2 }, payment(1000n));
    const { plan, settled: s, answer } = await paidCall(req, { hello: 'world' });
    expect(plan).toMatchObject({ operationId: req.operationId, payer: PAYER, amount: '1000', earlyStart: true });
    expect(s.payment).toMatchObject({ operationId: req.operationId, payer: PAYER, amount: '1000', network: NETWORK });
    expect(answer).toMatchObject({ kind: 'response', status: 200, body: { hello: 'world' }, replayed: false });
    expect(answer.settlement).toMatchObject({ success: true, transaction: s.payment.txHash });
    expect(answer.headers['PAYMENT-RESPONSE']).toEqual(expect.any(String));
  });

  it('replay by the payer gets the stored answer; by a stranger only the receipt; nothing runs or settles again', async () => {
    facilitator.settleMode = 'ok';
    const p = payment(1000n);
    const req = request({ a: 3 }, p);
    await paidCall(req, { secret: 42 });
    const settles = facilitator.settles;

    const byPayer = await paywall.decide({ ...req, operationId: 'exe_other', caller: PAYER.toUpperCase().replace('0X', '0x') });
    expect(byPayer.kind).toBe('replay');
    if (byPayer.kind === 'replay') {
      expect(byPayer.response).toMatchObject({ status: 200, body: { secret: 42 }, replayed: true });
      expect(byPayer.response.settlement).toMatchObject({ success: true });
    }

    const byStranger = await paywall.decide({ ...req, operationId: 'exe_other2', caller: `0x${'e'.repeat(40)}` });
    expect(byStranger.kind).toBe('replay');
    if (byStranger.kind === 'replay') {
      expect(byStranger.response.status).toBe(409);
      expect(byStranger.response.body).toMatchObject({ reason: 'payment_already_used', execution_id: req.operationId });
      expect(JSON.stringify(byStranger.response.body)).not.toContain('secret');
    }
    expect(facilitator.settles).toBe(settles);
  });

  it('conflict: the same payment for another request is refused with the 409 problem, created where it is known', async () => {
    facilitator.settleMode = 'ok';
    const p = payment(1000n);
    await paidCall(request({ a: 4 }, p), { ok: true });
    const d = await paywall.decide(request({ a: 'another body' }, p));
    expect(d.kind).toBe('refused');
    if (d.kind !== 'refused' || !('problem' in d)) throw new Error('expected a problem');
    expect(d.problem).toBeInstanceOf(ProblemError);
    expect(d.problem.status).toBe(409);
    expect(d.problem.body).toMatchObject({ type: 'about:blank', title: 'Conflict', status: 409, reason: 'payment_conflict' });
  });

  it('settle refused: the 402 with the reason, the reservation released, the same payment may be tried again', async () => {
    facilitator.settleMode = 'refuse';
    const p = payment(1000n);
    const req = request({ a: 5 }, p);
    const plan = proceed(await paywall.decide(req));
    const s = await plan.settlement;
    expect(s.kind).toBe('refused');
    if (s.kind !== 'refused' || !('response' in s)) throw new Error('expected a 402');
    expect(s.response.status).toBe(402);
    expect(s.response.body).toMatchObject({ reason: 'insufficient_funds' });
    facilitator.settleMode = 'ok';
    const again = await paidCall({ ...req, operationId: 'exe_again' }, { second: true });
    expect(again.answer).toMatchObject({ status: 200, body: { second: true } });
  });

  it('settle lost: 409 in progress while unknown; the payer retrying finds it on chain and runs it under the first operation id', async () => {
    facilitator.settleMode = 'lose';
    const p = payment(1000n);
    const req = request({ a: 6 }, p);
    const plan = proceed(await paywall.decide(req));
    const s = await plan.settlement;
    if (s.kind !== 'refused' || !('problem' in s)) throw new Error('expected a problem');
    expect(s.problem.body).toMatchObject({ status: 409, reason: 'payment_in_progress' });
    expect(s.problem.headers).toEqual({ 'Retry-After': '1' });

    facilitator.settleMode = 'ok';
    const retry = await paywall.decide({ ...req, operationId: 'exe_retry', caller: PAYER });
    const reconciled = proceed(retry);
    expect(reconciled).toMatchObject({ operationId: req.operationId, earlyStart: false });
    const done = await paywall.complete(await settled(reconciled), Promise.resolve({ ok: true as const, body: { reconciled: true } }));
    expect(done).toMatchObject({ status: 200, body: { reconciled: true } });
  });

  it('run failed: the failure is stored with its refund, the refund is queued once, and a replay gets the same answer', async () => {
    facilitator.settleMode = 'ok';
    const req = request({ a: 7 }, payment(1000n));
    const s = await settled(proceed(await paywall.decide(req)));
    const answer = await paywall.complete(s, Promise.reject(new Error('capability crashed')));
    expect(answer).toMatchObject({ status: 500, body: { status: 500, refund: { status: 'pending', amount: '1000' } } });
    expect(answer.headers['Content-Type']).toBe('application/problem+json');
    expect(await readRefund(redis, keys, req.operationId)).toMatchObject({ status: 'pending', amount: '1000' });
    const replay = await paywall.decide({ ...req, operationId: 'exe_x', caller: PAYER });
    expect(replay).toMatchObject({ kind: 'replay', response: { status: 500, replayed: true } });
  });

  it('a failure the edge reports (not a throw) is refunded with the problem it gave', async () => {
    facilitator.settleMode = 'ok';
    const req = request({ a: 8 }, payment(1000n));
    const s = await settled(proceed(await paywall.decide(req)));
    const body = { type: 'about:blank', title: 'Bad Gateway', status: 502, detail: 'upstream failed', execution_id: req.operationId };
    const answer = await paywall.complete(s, Promise.resolve({ ok: false as const, status: 502, body, refund: true }));
    expect(answer).toMatchObject({ status: 502, body: { ...body, refund: { status: 'pending', amount: '1000' } } });
  });

  it('store outage: with Redis unreachable, decide throws the store error and nothing is settled', async () => {
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    const outage = new Paywall({
      redis: down,
      keys,
      facilitator,
      publicClient: chain.client,
      refunds: new RefundQueue(redis, keys, refundConnection),
      log: pino({ level: 'silent' }),
      terms: { network: NETWORK, asset: ASSET, payTo: PAY_TO, assetName: 'USD Coin', assetVersion: '2' },
    });
    const settles = facilitator.settles;
    const e = await outage.decide(request({ a: 9 }, payment(1000n))).catch((err: unknown) => err);
    expect(isRedisUnavailable(e)).toBe(true);
    expect(facilitator.settles).toBe(settles);
    down.disconnect();
  });
});
