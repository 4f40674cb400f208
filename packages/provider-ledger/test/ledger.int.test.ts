import { resolveRedis, type RedisHandle } from '@acg/devnet';
import type { RefundRequest } from '@acg/treasury';
import { connectRedis, RedisKeys } from '@acg/redis';
import { DisputeView, PayoutView, ProviderBalance } from '@acg/schemas';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DisputeError, ProviderLedger, splitPrice, type LedgerTotals } from '../src/index.js';

let handle: RedisHandle;
let redis: Redis;
beforeAll(async () => {
  handle = await resolveRedis({ preferPrivate: true });
  redis = connectRedis({ url: handle.url });
});
afterAll(async () => {
  redis?.disconnect();
  await handle?.stop();
});

const PAYER = '0x00000000000000000000000000000000000000B1' as const;
const OTHER = '0x00000000000000000000000000000000000000C2' as const;
const PROVIDER_ADDRESS = '0x00000000000000000000000000000000000000A1' as const;
const TX = `0x${'ab'.repeat(32)}` as const;

/** A ledger on a fresh key prefix with a movable clock and a refund queue that records what it is given. */
function setup(o: { feeBps?: number; windowSeconds?: number; refunds?: boolean } = {}) {
  const keys = new RedisKeys(`acg:test:pl:${ulid()}:`);
  const clock = { now: Date.UTC(2030, 0, 1) };
  const enqueued: RefundRequest[] = [];
  const refunds = { enqueue: async (r: RefundRequest) => void enqueued.push(r) };
  const ledger = new ProviderLedger({
    redis,
    keys,
    feeBps: o.feeBps ?? 1000,
    disputeWindowSeconds: o.windowSeconds ?? 86_400,
    now: () => clock.now,
    ...(o.refunds === false ? {} : { refunds }),
  });
  return { keys, clock, ledger, enqueued, refunds };
}

const providerId = () => `prv_${ulid()}`;
const executionId = () => `exe_${ulid()}`;
const credit = (ledger: ProviderLedger, provider_id: string, price: bigint, execution_id = executionId(), payer: `0x${string}` = PAYER) =>
  ledger
    .credit({ execution_id, provider_id, provider_address: PROVIDER_ADDRESS, capability_id: 'intelligence.echo', payer, price, payment_tx_hash: TX })
    .then((r) => ({ ...r, execution_id }));

/** held + available + reserved + paid + fees = credited − refunded, to the base unit. */
function expectInvariant(t: LedgerTotals) {
  expect(t.held + t.available + t.reserved + t.paid + t.fees).toBe(t.credited - t.refunded);
  for (const p of Object.values(t.providers)) for (const v of Object.values(p)) expect(v).toBeGreaterThanOrEqual(0n);
}

describe('splitPrice', () => {
  it('rounds the fee down and gives the rest to the provider', () => {
    expect(splitPrice(1_000_001n, 1000)).toEqual({ fee: 100_000n, share: 900_001n });
    expect(splitPrice(9n, 1000)).toEqual({ fee: 0n, share: 9n });
    expect(splitPrice(1_000n, 0)).toEqual({ fee: 0n, share: 1_000n });
    expect(splitPrice(1_000n, 10_000)).toEqual({ fee: 1_000n, share: 0n });
    expect(splitPrice(123_456_789_012_345_678n, 1234)).toEqual({ fee: 15_234_567_764_123_456n, share: 108_222_221_248_222_222n });
  });
});

describe('ProviderLedger credit and maturity', () => {
  it('holds the share for the dispute window, then makes it available; the fee goes to the totals', async () => {
    const { ledger, clock } = setup({ windowSeconds: 60 });
    const prv = providerId();
    const c = await credit(ledger, prv, 1_000_001n);
    expect(c).toMatchObject({ share: 900_001n, fee: 100_000n });
    expect(ProviderBalance.parse(await ledger.balance(prv))).toEqual({ held: '900001', available: '0', paid: '0' });
    clock.now += 59_999;
    expect(await ledger.balance(prv)).toEqual({ held: '900001', available: '0', paid: '0' });
    clock.now += 1;
    expect(await ledger.balance(prv)).toEqual({ held: '0', available: '900001', paid: '0' });
    const entry = await ledger.entry(c.execution_id);
    expect(entry).toMatchObject({ provider_id: prv, payer: PAYER, price: 1_000_001n, share: 900_001n, fee: 100_000n, status: 'available', dispute_id: null });
    expect(entry!.matures_at).toBe(new Date(clock.now).toISOString());
    const t = await ledger.totals();
    expect(t).toMatchObject({ credited: 1_000_001n, fees: 100_000n, refunded: 0n, entries: 1, available: 900_001n });
    expectInvariant(t);
  });

  it('credits once per execution: a second call returns the first result and changes nothing', async () => {
    const { ledger } = setup();
    const prv = providerId();
    const first = await credit(ledger, prv, 5_000n);
    const again = await ledger.credit({
      execution_id: first.execution_id,
      provider_id: prv,
      provider_address: PROVIDER_ADDRESS,
      capability_id: 'intelligence.echo',
      payer: PAYER,
      price: 9_999_999n,
      payment_tx_hash: TX,
    });
    expect(again).toEqual({ share: 4_500n, fee: 500n });
    expect(await ledger.balance(prv)).toEqual({ held: '4500', available: '0', paid: '0' });
    expect(await ledger.totals()).toMatchObject({ credited: 5_000n, fees: 500n, entries: 1 });
  });

  it('handles a zero share (fee 100 %) and a zero fee', async () => {
    const all = setup({ feeBps: 10_000, windowSeconds: 0 });
    const a = providerId();
    await credit(all.ledger, a, 700n);
    expect(await all.ledger.balance(a)).toEqual({ held: '0', available: '0', paid: '0' });
    expectInvariant(await all.ledger.totals());
    const none = setup({ feeBps: 0, windowSeconds: 0 });
    const b = providerId();
    await credit(none.ledger, b, 700n);
    expect(await none.ledger.balance(b)).toEqual({ held: '0', available: '700', paid: '0' });
  });

  it('answers undefined for an execution it never credited', async () => {
    const { ledger } = setup();
    expect(await ledger.entry(executionId())).toBeUndefined();
  });
});

describe('ProviderLedger disputes', () => {
  it('lets only the payer open one dispute within the window; the share stays held past the window', async () => {
    const { ledger, clock } = setup({ windowSeconds: 60 });
    const prv = providerId();
    const c = await credit(ledger, prv, 2_000_000n);
    await expect(ledger.openDispute({ execution_id: c.execution_id, payer: OTHER, reason: 'x' })).rejects.toMatchObject({ reason: 'not_found' });
    await expect(ledger.openDispute({ execution_id: executionId(), payer: PAYER, reason: 'x' })).rejects.toMatchObject({ reason: 'not_found' });
    const d = DisputeView.parse(await ledger.openDispute({ execution_id: c.execution_id, payer: PAYER.toLowerCase(), reason: 'wrong answer' }));
    expect(d).toMatchObject({
      execution_id: c.execution_id,
      provider_id: prv,
      payer: PAYER,
      amount: '2000000',
      status: 'open',
      reason: 'wrong answer',
      statement: null,
      resolved_at: null,
      refund: null,
    });
    expect(d.dispute_id).toMatch(/^dsp_/);
    const again = await ledger.openDispute({ execution_id: c.execution_id, payer: PAYER, reason: 'again' }).catch((e) => e);
    expect(again).toBeInstanceOf(DisputeError);
    expect(again).toMatchObject({ reason: 'already_disputed', disputeId: d.dispute_id });
    clock.now += 3_600_000;
    expect(await ledger.balance(prv)).toEqual({ held: '1800000', available: '0', paid: '0' });
    expect(await ledger.disputesOfProvider(prv)).toEqual([d]);
  });

  it('refuses a dispute once the window has passed, even before the share matured lazily', async () => {
    const { ledger, clock } = setup({ windowSeconds: 60 });
    const c = await credit(ledger, providerId(), 1_000n);
    clock.now += 60_000;
    await expect(ledger.openDispute({ execution_id: c.execution_id, payer: PAYER, reason: 'late' })).rejects.toMatchObject({ reason: 'window_passed' });
  });

  it('lets only the provider answer, while open', async () => {
    const { ledger, clock } = setup();
    const c = await credit(ledger, providerId(), 1_000n);
    const d = await ledger.openDispute({ execution_id: c.execution_id, payer: PAYER, reason: 'r' });
    await expect(ledger.respondToDispute({ dispute_id: d.dispute_id, provider_address: PAYER, statement: 's' })).rejects.toMatchObject({ reason: 'not_found' });
    clock.now += 1_000;
    const answered = await ledger.respondToDispute({ dispute_id: d.dispute_id, provider_address: PROVIDER_ADDRESS.toLowerCase(), statement: 'it was right' });
    expect(answered).toMatchObject({ status: 'open', statement: 'it was right', responded_at: new Date(clock.now).toISOString() });
    await ledger.resolveDispute({ dispute_id: d.dispute_id, outcome: 'release', by: 'admin' });
    await expect(ledger.respondToDispute({ dispute_id: d.dispute_id, provider_address: PROVIDER_ADDRESS, statement: 'late' })).rejects.toMatchObject({
      reason: 'closed',
    });
  });

  it('release makes the share available at once', async () => {
    const { ledger, enqueued } = setup();
    const prv = providerId();
    const c = await credit(ledger, prv, 1_000_000n);
    const d = await ledger.openDispute({ execution_id: c.execution_id, payer: PAYER, reason: 'r' });
    const released = await ledger.resolveDispute({ dispute_id: d.dispute_id, outcome: 'release', by: 'admin' });
    expect(released).toMatchObject({ status: 'released', resolved_by: 'admin', refund: null });
    expect(await ledger.balance(prv)).toEqual({ held: '0', available: '900000', paid: '0' });
    expect((await ledger.entry(c.execution_id))?.status).toBe('available');
    expect(enqueued).toEqual([]);
    await expect(ledger.resolveDispute({ dispute_id: d.dispute_id, outcome: 'refund', by: 'admin' })).rejects.toMatchObject({ reason: 'closed' });
    expectInvariant(await ledger.totals());
  });

  it('refund cancels share and fee and enqueues the full price back to the payer, once', async () => {
    const { ledger, enqueued } = setup();
    const prv = providerId();
    const kept = await credit(ledger, prv, 3_000_000n);
    const c = await credit(ledger, prv, 1_000_000n);
    const d = await ledger.openDispute({ execution_id: c.execution_id, payer: PAYER, reason: 'r' });
    const refunded = await ledger.resolveDispute({ dispute_id: d.dispute_id, outcome: 'refund', by: 'admin' });
    expect(refunded).toMatchObject({ status: 'refunded', resolved_by: 'admin', refund: { status: 'pending' } });
    expect(enqueued).toEqual([{ operationId: d.dispute_id, payer: PAYER, amount: '1000000', paymentTxHash: TX }]);
    expect(await ledger.balance(prv)).toEqual({ held: '2700000', available: '0', paid: '0' });
    expect((await ledger.entry(c.execution_id))?.status).toBe('refunded');
    expect((await ledger.entry(kept.execution_id))?.status).toBe('held');
    const t = await ledger.totals();
    expect(t).toMatchObject({ credited: 4_000_000n, fees: 300_000n, refunded: 1_000_000n, held: 2_700_000n });
    expectInvariant(t);
    await expect(ledger.resolveDispute({ dispute_id: d.dispute_id, outcome: 'refund', by: 'admin' })).rejects.toMatchObject({ reason: 'closed' });
    expect(enqueued).toHaveLength(1);
    expect(await ledger.enqueueDueRefunds()).toEqual([]);
  });

  it('keeps a refund due until a ledger with a refund queue enqueues it', async () => {
    const { ledger, keys, clock } = setup({ refunds: false });
    const c = await credit(ledger, providerId(), 1_000n);
    const d = await ledger.openDispute({ execution_id: c.execution_id, payer: PAYER, reason: 'r' });
    await ledger.resolveDispute({ dispute_id: d.dispute_id, outcome: 'refund', by: 'admin' });
    expect(await ledger.enqueueDueRefunds()).toEqual([]);
    const enqueued: RefundRequest[] = [];
    const withQueue = new ProviderLedger({
      redis,
      keys,
      feeBps: 1000,
      disputeWindowSeconds: 86_400,
      now: () => clock.now,
      refunds: { enqueue: async (r) => void enqueued.push(r) },
    });
    expect(await withQueue.enqueueDueRefunds()).toEqual([d.dispute_id]);
    expect(await withQueue.enqueueDueRefunds()).toEqual([]);
    expect(enqueued.map((r) => r.operationId)).toEqual([d.dispute_id]);
  });

  it('auto-resolves old open disputes: released when answered, refunded when not', async () => {
    const { ledger, clock, enqueued } = setup();
    const prv = providerId();
    const a = await credit(ledger, prv, 1_000n);
    const b = await credit(ledger, prv, 2_000n);
    const da = await ledger.openDispute({ execution_id: a.execution_id, payer: PAYER, reason: 'r' });
    const db = await ledger.openDispute({ execution_id: b.execution_id, payer: PAYER, reason: 'r' });
    await ledger.respondToDispute({ dispute_id: da.dispute_id, provider_address: PROVIDER_ADDRESS, statement: 's' });
    clock.now += 99_000;
    expect(await ledger.autoResolveDisputes(100)).toEqual({ released: [], refunded: [] });
    clock.now += 1_000;
    expect(await ledger.autoResolveDisputes(100)).toEqual({ released: [da.dispute_id], refunded: [db.dispute_id] });
    expect((await ledger.dispute(da.dispute_id))?.view).toMatchObject({ status: 'released', resolved_by: 'auto' });
    expect((await ledger.dispute(db.dispute_id))?.view).toMatchObject({ status: 'refunded', resolved_by: 'auto' });
    expect(enqueued.map((r) => [r.operationId, r.amount])).toEqual([[db.dispute_id, '2000']]);
    expectInvariant(await ledger.totals());
  });
});

describe('ProviderLedger payouts', () => {
  it('reserves the whole available balance at or above the minimum, then pays it or gives it back', async () => {
    const { ledger } = setup({ windowSeconds: 0 });
    const prv = providerId();
    await credit(ledger, prv, 1_000_000n);
    await ledger.matureAll();
    expect(await ledger.reservePayout(prv, 900_001n)).toBeUndefined();
    const p = await ledger.reservePayout(prv, 900_000n);
    expect(p).toMatchObject({ provider_id: prv, address: PROVIDER_ADDRESS, amount: 900_000n, status: 'reserved', tx_hash: null });
    expect(await ledger.reservePayout(prv, 0n)).toBeUndefined();
    expect(await ledger.balance(prv)).toEqual({ held: '0', available: '0', paid: '900000' });
    expect((await ledger.reservedPayouts()).map((r) => r.payout_id)).toEqual([p!.payout_id]);
    expect(await ledger.settlePayout(p!.payout_id, 'failed')).toBe(true);
    expect(await ledger.balance(prv)).toEqual({ held: '0', available: '900000', paid: '0' });
    const q = await ledger.reservePayout(prv, 1n);
    expect(await ledger.settlePayout(q!.payout_id, 'sent', TX)).toBe(true);
    expect(await ledger.settlePayout(q!.payout_id, 'sent', TX)).toBe(false);
    expect(await ledger.settlePayout(q!.payout_id, 'failed')).toBe(false);
    expect(await ledger.balance(prv)).toEqual({ held: '0', available: '0', paid: '900000' });
    expect(await ledger.reservedPayouts()).toEqual([]);
    const views = await ledger.payouts(prv);
    expect(views.map((v) => PayoutView.parse(v))).toEqual([
      // sent: watched until final by the worker's finality tracker (docs/decisions.md "Confirmations and reorgs"), none here
      { payout_id: q!.payout_id, amount: '900000', tx_hash: TX, status: 'sent', finality: 'unconfirmed', created_at: expect.any(String) },
      { payout_id: p!.payout_id, amount: '900000', tx_hash: null, status: 'failed', created_at: expect.any(String) },
    ]);
    expectInvariant(await ledger.totals());
  });
});

describe('ProviderLedger invariant', () => {
  type Op =
    | { kind: 'credit'; provider: number; price: bigint }
    | { kind: 'advance'; seconds: number }
    | { kind: 'dispute'; pick: number }
    | { kind: 'respond'; pick: number }
    | { kind: 'resolve'; pick: number; outcome: 'refund' | 'release' }
    | { kind: 'autoResolve' }
    | { kind: 'reserve'; provider: number; minimum: bigint }
    | { kind: 'settle'; pick: number; outcome: 'sent' | 'failed' };

  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('credit' as const), provider: fc.nat(2), price: fc.bigInt({ min: 0n, max: 10n ** 15n }) }),
    fc.record({ kind: fc.constant('credit' as const), provider: fc.nat(2), price: fc.bigInt({ min: 0n, max: 20n }) }),
    fc.record({ kind: fc.constant('advance' as const), seconds: fc.integer({ min: 1, max: 200 }) }),
    fc.record({ kind: fc.constant('dispute' as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant('respond' as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant('resolve' as const), pick: fc.nat(), outcome: fc.constantFrom('refund' as const, 'release' as const) }),
    fc.record({ kind: fc.constant('autoResolve' as const) }),
    fc.record({ kind: fc.constant('reserve' as const), provider: fc.nat(2), minimum: fc.bigInt({ min: 0n, max: 10n ** 12n }) }),
    fc.record({ kind: fc.constant('settle' as const), pick: fc.nat(), outcome: fc.constantFrom('sent' as const, 'failed' as const) }),
  );

  it('keeps held + available + reserved + paid + fees = credited − refunded through any sequence of moves', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 10_000 }), fc.array(op, { minLength: 1, maxLength: 40 }), async (feeBps, ops) => {
        const { ledger, clock } = setup({ feeBps, windowSeconds: 100 });
        const providers = [providerId(), providerId(), providerId()];
        const executions: string[] = [];
        const disputes: string[] = [];
        const payouts: string[] = [];
        let credited = 0n;
        let refunded = 0n;
        const pick = <T>(list: T[], i: number) => (list.length ? list[i % list.length] : undefined);
        for (const o of ops) {
          switch (o.kind) {
            case 'credit': {
              const c = await credit(ledger, providers[o.provider], o.price);
              executions.push(c.execution_id);
              credited += o.price;
              expect(c.share + c.fee).toBe(o.price);
              break;
            }
            case 'advance':
              clock.now += o.seconds * 1000;
              await ledger.balance(providers[0]);
              break;
            case 'dispute': {
              const e = pick(executions, o.pick);
              if (e) {
                const d = await ledger.openDispute({ execution_id: e, payer: PAYER, reason: 'r' }).catch((err) => {
                  if (!(err instanceof DisputeError)) throw err;
                });
                if (d) disputes.push(d.dispute_id);
              }
              break;
            }
            case 'respond': {
              const d = pick(disputes, o.pick);
              if (d) await ledger.respondToDispute({ dispute_id: d, provider_address: PROVIDER_ADDRESS, statement: 's' }).catch(() => undefined);
              break;
            }
            case 'resolve': {
              const d = pick(disputes, o.pick);
              if (d) {
                const v = await ledger.resolveDispute({ dispute_id: d, outcome: o.outcome, by: 'admin' }).catch((err) => {
                  if (!(err instanceof DisputeError)) throw err;
                });
                if (v?.status === 'refunded') refunded += BigInt(v.amount);
              }
              break;
            }
            case 'autoResolve': {
              const r = await ledger.autoResolveDisputes(150);
              for (const id of r.refunded) refunded += BigInt((await ledger.dispute(id))!.view.amount);
              break;
            }
            case 'reserve': {
              const p = await ledger.reservePayout(providers[o.provider], o.minimum);
              if (p) payouts.push(p.payout_id);
              break;
            }
            case 'settle': {
              const p = pick(payouts, o.pick);
              if (p) await ledger.settlePayout(p, o.outcome, o.outcome === 'sent' ? TX : undefined);
              break;
            }
          }
          expectInvariant(await ledger.totals());
        }
        const t = await ledger.totals();
        expect(t.credited).toBe(credited);
        expect(t.refunded).toBe(refunded);
        // the per-entry view agrees with the balances
        const entries = await Promise.all(executions.map((e) => ledger.entry(e)));
        const heldShares = entries.filter((e) => e?.status === 'held').reduce((s, e) => s + e!.share, 0n);
        expect(t.held).toBe(heldShares);
        const refundedPrices = entries.filter((e) => e?.status === 'refunded').reduce((s, e) => s + e!.price, 0n);
        expect(refundedPrices).toBe(refunded);
      }),
      { numRuns: 40 },
    );
  });
});

describe('ProviderLedger.reverseCredit (a credited call refunded after all)', () => {
  it('cancels a held share and its fee once; the entry is refunded and no dispute can open on it', async () => {
    const { ledger } = setup();
    const prv = providerId();
    const c = await credit(ledger, prv, 1_000n);
    expect(await ledger.reverseCredit(c.execution_id)).toBe('reversed');
    expect(await ledger.reverseCredit(c.execution_id)).toBe('none');
    expect(await ledger.entry(c.execution_id)).toMatchObject({ status: 'refunded', share: 900n, fee: 100n });
    const t = await ledger.totals();
    expect(t).toMatchObject({ credited: 1_000n, refunded: 1_000n, fees: 0n, held: 0n, available: 0n });
    expectInvariant(t);
    await expect(ledger.openDispute({ execution_id: c.execution_id, payer: PAYER.toLowerCase(), reason: 'again' })).rejects.toBeInstanceOf(DisputeError);
  });

  it('cancels an available share while the balance holds it; paid out → nothing changes', async () => {
    const { ledger, clock } = setup({ windowSeconds: 60 });
    const prv = providerId();
    const [a, b] = [await credit(ledger, prv, 1_000n), await credit(ledger, prv, 1_000n)];
    clock.now += 61_000;
    expect((await ledger.balance(prv)).available).toBe('1800');
    expect(await ledger.reverseCredit(a.execution_id)).toBe('reversed');
    expect((await ledger.balance(prv)).available).toBe('900');
    const payout = await ledger.reservePayout(prv, 1n);
    expect(payout).toBeTruthy();
    expect(await ledger.reverseCredit(b.execution_id)).toBe('paid_out');
    expect(await ledger.entry(b.execution_id)).toMatchObject({ status: 'available' });
    expectInvariant(await ledger.totals());
  });

  it('closes an open dispute without a second refund; after a dispute refunded it, reports already_refunded', async () => {
    const { ledger, enqueued } = setup();
    const prv = providerId();
    const open = await credit(ledger, prv, 1_000n);
    const dispute = await ledger.openDispute({ execution_id: open.execution_id, payer: PAYER.toLowerCase(), reason: 'bad' });
    expect(await ledger.reverseCredit(open.execution_id)).toBe('reversed');
    expect((await ledger.dispute(dispute.dispute_id))?.view).toMatchObject({ status: 'refunded', resolved_by: 'reversal' });
    await expect(ledger.resolveDispute({ dispute_id: dispute.dispute_id, outcome: 'refund', by: 'admin' })).rejects.toBeInstanceOf(DisputeError);
    expect(enqueued).toEqual([]);

    const refundedByDispute = await credit(ledger, prv, 1_000n);
    const d2 = await ledger.openDispute({ execution_id: refundedByDispute.execution_id, payer: PAYER.toLowerCase(), reason: 'bad' });
    await ledger.resolveDispute({ dispute_id: d2.dispute_id, outcome: 'refund', by: 'admin' });
    expect(await ledger.reverseCredit(refundedByDispute.execution_id)).toBe('already_refunded');
    const t = await ledger.totals();
    expect(t.refunded).toBe(2_000n);
    expectInvariant(t);
  });

  it('without an entry leaves a tombstone: a late credit of that execution is a no-op', async () => {
    const { ledger } = setup();
    const prv = providerId();
    const id = executionId();
    expect(await ledger.reverseCredit(id)).toBe('none');
    expect(await ledger.entry(id)).toBeUndefined();
    await credit(ledger, prv, 1_000n, id);
    expect(await ledger.providerTotals(prv)).toEqual({ held: 0n, available: 0n, reserved: 0n, paid: 0n });
    expect((await ledger.totals()).credited).toBe(0n);
  });
});
