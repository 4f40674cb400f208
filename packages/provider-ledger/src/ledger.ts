import type { ProviderCredit } from '@acg/provider-directory';
import { readRefund, storedTransferRecord, type RefundQueue, type TransferRecord } from '@acg/treasury';
import type { RedisKeys } from '@acg/redis';
import {
  adoptProviderPayout,
  type AdoptPayoutResult,
  creditProvider,
  matureProviderEntry,
  openProviderDispute,
  reserveProviderPayout,
  resolveProviderDispute,
  respondToProviderDispute,
  reverseProviderCredit,
  settleProviderPayout,
} from './commands/index.js';
import type { DisputeView, PayoutView, ProviderBalance } from '@acg/schemas';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';
import { DisputeError } from './errors.js';
import { providerLedgerKeys } from './commands/keys.js';

/** Hex string (`0x...`). */
type Hex = `0x${string}`;

/** What {@link ProviderLedger} needs. */
export interface ProviderLedgerOptions {
  redis: Redis;
  keys: RedisKeys;
  /** The gateway's fee in basis points, 0..10000 (PROVIDER_FEE_BPS, default 1000 = 10 %). */
  feeBps: number;
  /** How long a credited share stays held (and disputable), seconds (PROVIDER_DISPUTE_WINDOW_SECONDS, default 86400). */
  disputeWindowSeconds: number;
  /** The clock, unix ms (default `Date.now`; tests move it). */
  now?: () => number;
  /**
   * Enqueues the on-chain refund of a dispute resolved `refund` (`RefundQueue` of @acg/treasury,
   * operation id = the dispute id). Without it the refund waits in the refunds-due set until a
   * ledger that has one calls {@link ProviderLedger.enqueueDueRefunds} (the payout pass does).
   */
  refunds?: Pick<RefundQueue, 'enqueue'>;
  /**
   * The hold of one credit, seconds: the dispute window scaled by the offer's trust tier
   * (packages/provider-directory README "Trust scores": dispute-hold tiers). Without it, or when it throws,
   * every credit is held `disputeWindowSeconds`.
   */
  holdSeconds?: (e: ProviderCredit) => Promise<number>;
}

/** A SUCCEEDED provider execution to credit (the shape `@acg/provider-directory` hands over): `price` is integer USDC base units the buyer paid. */
export type { ProviderCredit };

/** States of a ledger entry: `held` (dispute window, or disputed), `available` (matured or released), `refunded` (dispute upheld). */
export type LedgerEntryStatus = 'held' | 'available' | 'refunded';

/**
 * The ledger entry of one provider execution. Amounts in integer USDC base units: `price` =
 * `share` + `fee`. Times RFC 3339 UTC. Once `available`, the share is part of the provider's
 * balance and is paid out with it (entries are not tracked into payouts).
 */
export interface LedgerEntry extends ProviderCredit {
  share: bigint;
  fee: bigint;
  credited_at: string;
  /** end of the dispute window */
  matures_at: string;
  status: LedgerEntryStatus;
  dispute_id: string | null;
}

/** One provider's money, integer USDC base units. `reserved`: taken by a payout being sent. */
export interface ProviderTotals {
  held: bigint;
  available: bigint;
  reserved: bigint;
  paid: bigint;
}

/**
 * The whole ledger, integer USDC base units. Invariant (to the base unit):
 * `held + available + reserved + paid + fees = credited − refunded`, the four balances summed over
 * all providers.
 */
export interface LedgerTotals extends ProviderTotals {
  /** sum of the prices credited */
  credited: bigint;
  /** the gateway's fees kept (reversed for refunded disputes) */
  fees: bigint;
  /** full prices of disputes upheld with `refund` */
  refunded: bigint;
  /** executions credited */
  entries: number;
  providers: Record<string, ProviderTotals>;
}

/** Payout states (schema `PayoutView.status`). */
export type PayoutStatus = PayoutView['status'];

/** A payout as stored: one USDC transfer treasury → `address`. `amount` integer base units. */
export interface PayoutRecord {
  payout_id: string;
  provider_id: string;
  address: Hex;
  amount: bigint;
  status: PayoutStatus;
  created_at: string;
  /** the signed (`reserved`) or mined (`sent`, `failed`) transaction, if any; follows a re-send after a reorg */
  tx_hash: Hex | null;
  /** a `sent` payout: `unconfirmed` until its block is final (re-sent if reorged out), then `final` (@acg/payments `finality.ts`) */
  finality?: 'unconfirmed' | 'final';
}

/** A dispute with the provider's address (who may answer it); `view` is what buyer, provider and admin see. */
export interface StoredDispute {
  view: DisputeView;
  provider_address: Hex;
}

/**
 * Splits a price (integer USDC base units) into the gateway's fee, `floor(price × feeBps / 10000)`,
 * and the provider's share, `price − fee` (docs/decisions.md "Providers": fee rounded down).
 *
 * @example splitPrice(1_000_001n, 1000) // { fee: 100_000n, share: 900_001n }
 */
export function splitPrice(price: bigint, feeBps: number): { share: bigint; fee: bigint } {
  const fee = (price * BigInt(feeBps)) / 10_000n;
  return { share: price - fee, fee };
}

const big = (v: string | null | undefined) => BigInt(v || '0');
const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

/**
 * The provider money ledger (docs/decisions.md "Providers": money and disputes), in Redis. Every multi-key
 * move is one Lua script (@acg/redis `pl_*`), so balances and totals never disagree:
 *
 * - {@link credit}: a SUCCEEDED provider execution's share is `held` until `now + disputeWindowSeconds`, the fee goes to the totals;
 * - maturity ({@link balance}, {@link mature}): a held share whose window passed without a dispute becomes `available`;
 * - disputes: {@link openDispute} by the payer within the window keeps the share held;
 *   {@link resolveDispute} `refund` cancels share and fee and enqueues an on-chain refund of the
 *   full price to the payer, `release` makes the share available at once;
 * - payouts ({@link reservePayout}, {@link settlePayout}): available → reserved → paid (or back to available).
 */
export class ProviderLedger {
  readonly feeBps: number;
  readonly disputeWindowSeconds: number;
  private readonly redis: Redis;
  private readonly keys: RedisKeys;
  private readonly now: () => number;
  private readonly refunds?: Pick<RefundQueue, 'enqueue'>;
  private readonly holdSeconds?: (e: ProviderCredit) => Promise<number>;

  constructor(o: ProviderLedgerOptions) {
    if (!Number.isInteger(o.feeBps) || o.feeBps < 0 || o.feeBps > 10_000) throw new RangeError('feeBps must be an integer 0..10000');
    if (!(o.disputeWindowSeconds >= 0)) throw new RangeError('disputeWindowSeconds must be ≥ 0');
    this.redis = o.redis;
    this.keys = o.keys;
    this.feeBps = o.feeBps;
    this.disputeWindowSeconds = o.disputeWindowSeconds;
    this.now = o.now ?? Date.now;
    this.refunds = o.refunds;
    this.holdSeconds = o.holdSeconds;
  }

  /**
   * Credits a SUCCEEDED provider execution: `fee = floor(price × feeBps / 10000)`, `share = price −
   * fee`, the share held until now + the hold (`holdSeconds` of the options: the dispute window
   * scaled by the offer's trust tier; else the dispute window). Idempotent per `execution_id`: a second
   * call returns the first result and changes nothing.
   *
   * @returns share and fee, integer USDC base units.
   * @throws {RangeError} a negative price.
   */
  async credit(e: ProviderCredit): Promise<{ share: bigint; fee: bigint }> {
    if (e.price < 0n) throw new RangeError('price must be ≥ 0');
    const { share, fee } = splitPrice(e.price, this.feeBps);
    const hold = this.holdSeconds ? await this.holdSeconds(e).catch(() => this.disputeWindowSeconds) : this.disputeWindowSeconds;
    const now = this.now();
    const r = await creditProvider(this.redis, {
      entryKey: providerLedgerKeys.providerLedgerEntry(this.keys, e.execution_id),
      balanceKey: providerLedgerKeys.providerBalance(this.keys, e.provider_id),
      maturingKey: providerLedgerKeys.providerMaturing(this.keys, e.provider_id),
      totalsKey: providerLedgerKeys.providerLedgerTotals(this.keys),
      providersKey: providerLedgerKeys.providerLedgerProviders(this.keys),
      executionId: e.execution_id,
      providerId: e.provider_id,
      providerAddress: e.provider_address,
      capabilityId: e.capability_id,
      payer: e.payer,
      price: e.price,
      share,
      fee,
      paymentTxHash: e.payment_tx_hash,
      creditedAtMs: now,
      maturesAtMs: now + Math.round((Number.isFinite(hold) && hold >= 0 ? hold : this.disputeWindowSeconds) * 1000),
    });
    return { share: r.share, fee: r.fee };
  }

  /**
   * Reverses the credit of `execution_id` because its payment is being refunded (the paywall's
   * refund decision or the crash-recovery sweep of @acg/payments), in one script
   * (`pl_credit_reverse`): the share leaves `held` (or `available`), the fee is reversed, the
   * price counts as refunded and the entry becomes `refunded`, so no dispute can refund it again;
   * an open dispute on it closes (`resolved_by: "reversal"`) without a refund of its own. Without
   * an entry a 30-day tombstone stops a late credit. Returns:
   * `reversed` | `none` (nothing was credited) | `already_refunded` (a dispute refunded the payer:
   * no second refund is due) | `paid_out` (the share left the balance; nothing changed, an operator
   * must settle it). Idempotent: a repeat returns `none`.
   */
  async reverseCredit(execution_id: string): Promise<'reversed' | 'none' | 'already_refunded' | 'paid_out'> {
    const entryKey = providerLedgerKeys.providerLedgerEntry(this.keys, execution_id);
    for (let attempt = 0; attempt < 5; attempt++) {
      const [providerId, disputeId] = await this.redis.hmget(entryKey, 'provider_id', 'dispute_id');
      const r = await reverseProviderCredit(this.redis, {
        entryKey,
        balanceKey: providerLedgerKeys.providerBalance(this.keys, providerId ?? ''),
        maturingKey: providerLedgerKeys.providerMaturing(this.keys, providerId ?? ''),
        totalsKey: providerLedgerKeys.providerLedgerTotals(this.keys),
        openDisputesKey: providerLedgerKeys.providerDisputesOpen(this.keys),
        disputeKey: providerLedgerKeys.providerDispute(this.keys, disputeId ?? ''),
        executionId: execution_id,
        providerId: providerId ?? '',
        disputeId: disputeId ?? '',
        now: iso(this.now()),
        tombstoneTtlSeconds: 30 * 24 * 3600,
      });
      if (r.result === 'retry') continue;
      if (r.result === 'tombstone') return 'none';
      if (r.result === 'already_refunded') return r.by === 'dispute' ? 'already_refunded' : 'none';
      return r.result;
    }
    throw new Error(`the ledger entry of ${execution_id} kept changing while its credit was reversed`);
  }

  /**
   * Moves the provider's held entries whose dispute window has passed and that have no dispute to
   * `available`. Returns how many moved. Safe to run concurrently (each move is atomic).
   */
  async mature(provider_id: string): Promise<number> {
    const maturingKey = providerLedgerKeys.providerMaturing(this.keys, provider_id);
    const now = this.now();
    const due = await this.redis.zrangebyscore(maturingKey, '-inf', now);
    let moved = 0;
    for (const executionId of due) {
      const ok = await matureProviderEntry(this.redis, {
        entryKey: providerLedgerKeys.providerLedgerEntry(this.keys, executionId),
        balanceKey: providerLedgerKeys.providerBalance(this.keys, provider_id),
        maturingKey,
        executionId,
        nowMs: now,
      });
      if (ok) moved++;
    }
    return moved;
  }

  /** {@link mature} for every provider with a ledger; returns how many entries moved. */
  async matureAll(): Promise<number> {
    let moved = 0;
    for (const id of await this.providers()) moved += await this.mature(id);
    return moved;
  }

  /**
   * The provider's balance (schema `ProviderBalance`: integer strings, USDC base units), after
   * maturing what is due. `paid` includes payouts being sent (`reserved`), as the payout list shows.
   */
  async balance(provider_id: string): Promise<ProviderBalance> {
    await this.mature(provider_id);
    const t = await this.providerTotals(provider_id);
    return { held: t.held.toString(), available: t.available.toString(), paid: (t.paid + t.reserved).toString() };
  }

  /** The provider's payouts, newest first (at most `limit`). */
  async payouts(provider_id: string, limit = 100): Promise<PayoutView[]> {
    const ids = await this.redis.zrevrange(providerLedgerKeys.providerPayouts(this.keys, provider_id), 0, limit - 1);
    const records = await Promise.all(ids.map((id) => this.payout(id)));
    return records.filter((r): r is PayoutRecord => r !== undefined).map(payoutView);
  }

  /** The provider's disputes, newest first (at most `limit`). */
  async disputesOfProvider(provider_id: string, limit = 100): Promise<DisputeView[]> {
    const ids = await this.redis.zrevrange(providerLedgerKeys.providerDisputes(this.keys, provider_id), 0, limit - 1);
    const disputes = await Promise.all(ids.map((id) => this.dispute(id)));
    return disputes.filter((d): d is StoredDispute => d !== undefined).map((d) => d.view);
  }

  /** The ledger entry of an execution, or undefined (not a credited provider execution). */
  async entry(execution_id: string): Promise<LedgerEntry | undefined> {
    const h = await this.redis.hgetall(providerLedgerKeys.providerLedgerEntry(this.keys, execution_id));
    // no entry, or the tombstone of a reversal that found none (see reverseCredit)
    if (!h.status || !h.provider_id) return undefined;
    return {
      execution_id: h.execution_id,
      provider_id: h.provider_id,
      provider_address: h.provider_address as Hex,
      capability_id: h.capability_id,
      payer: h.payer as Hex,
      price: big(h.price),
      share: big(h.share),
      fee: big(h.fee),
      payment_tx_hash: h.payment_tx_hash as Hex,
      credited_at: iso(h.credited_at),
      matures_at: iso(h.matures_at),
      status: h.status as LedgerEntryStatus,
      dispute_id: h.dispute_id || null,
    };
  }

  /** Ids of the providers with a ledger. */
  providers(): Promise<string[]> {
    return this.redis.smembers(providerLedgerKeys.providerLedgerProviders(this.keys));
  }

  /** One provider's balances as stored (no maturing), integer base units. */
  async providerTotals(provider_id: string): Promise<ProviderTotals> {
    const [held, available, reserved, paid] = await this.redis.hmget(
      providerLedgerKeys.providerBalance(this.keys, provider_id),
      'held',
      'available',
      'reserved',
      'paid',
    );
    return { held: big(held), available: big(available), reserved: big(reserved), paid: big(paid) };
  }

  /** The totals of the whole ledger (see {@link LedgerTotals} for the invariant). */
  async totals(): Promise<LedgerTotals> {
    const [credited, fees, refunded, entries] = await this.redis.hmget(
      providerLedgerKeys.providerLedgerTotals(this.keys),
      'credited',
      'fees',
      'refunded',
      'entries',
    );
    const providers: Record<string, ProviderTotals> = {};
    const sum: ProviderTotals = { held: 0n, available: 0n, reserved: 0n, paid: 0n };
    for (const id of await this.providers()) {
      const t = await this.providerTotals(id);
      providers[id] = t;
      for (const k of ['held', 'available', 'reserved', 'paid'] as const) sum[k] += t[k];
    }
    return { ...sum, credited: big(credited), fees: big(fees), refunded: big(refunded), entries: Number(entries ?? 0), providers };
  }

  // disputes

  /**
   * Opens a dispute on `execution_id` by `payer` (the caller) within the window of a credited
   * provider execution whose share is still held; the share then stays held (does not mature)
   * until the dispute is resolved. Dispute ids `dsp_` + ULID.
   *
   * @throws {DisputeError} `not_found` (unknown execution, not a provider execution, or `payer`
   *   is not its payer), `already_disputed`, `window_passed`.
   */
  async openDispute(p: { execution_id: string; payer: string; reason: string }): Promise<DisputeView> {
    const entryKey = providerLedgerKeys.providerLedgerEntry(this.keys, p.execution_id);
    const providerId = await this.redis.hget(entryKey, 'provider_id');
    if (!providerId) throw notFound('execution', p.execution_id);
    const disputeId = `dsp_${ulid()}`;
    const now = this.now();
    const r = await openProviderDispute(this.redis, {
      entryKey,
      disputeKey: providerLedgerKeys.providerDispute(this.keys, disputeId),
      providerDisputesKey: providerLedgerKeys.providerDisputes(this.keys, providerId),
      openDisputesKey: providerLedgerKeys.providerDisputesOpen(this.keys),
      maturingKey: providerLedgerKeys.providerMaturing(this.keys, providerId),
      disputeId,
      caller: p.payer,
      nowMs: now,
      reason: p.reason,
      openedAt: iso(now),
    });
    if (r.result === 'not_found') throw notFound('execution', p.execution_id);
    if (r.result === 'already_disputed')
      throw new DisputeError('already_disputed', `Execution ${p.execution_id} is disputed already (${r.disputeId}).`, r.disputeId);
    if (r.result === 'window_passed') throw new DisputeError('window_passed', `The dispute window of execution ${p.execution_id} has passed.`);
    return (await this.dispute(disputeId))!.view;
  }

  /**
   * Records the provider's statement on an open dispute (`provider_address`: the caller; a later
   * statement replaces the earlier one while the dispute is open).
   *
   * @throws {DisputeError} `not_found` (unknown dispute, or not its provider), `closed`.
   */
  async respondToDispute(p: { dispute_id: string; provider_address: string; statement: string }): Promise<DisputeView> {
    const r = await respondToProviderDispute(this.redis, {
      disputeKey: providerLedgerKeys.providerDispute(this.keys, p.dispute_id),
      caller: p.provider_address,
      statement: p.statement,
      respondedAt: iso(this.now()),
    });
    if (r === 'not_found') throw notFound('dispute', p.dispute_id);
    if (r === 'closed') throw new DisputeError('closed', `Dispute ${p.dispute_id} is resolved already.`);
    return (await this.dispute(p.dispute_id))!.view;
  }

  /**
   * Resolves an open dispute. `refund`: the share is cancelled and the fee reversed (the full price
   * counts as refunded), and an on-chain refund of the full price to the payer is enqueued
   * (operation id = the dispute id; see `refunds` in {@link ProviderLedgerOptions}). `release`: the
   * share becomes available at once. `by`: `admin`, or `auto` (the payout pass).
   *
   * @throws {DisputeError} `not_found`, `closed` (resolved already).
   */
  async resolveDispute(p: { dispute_id: string; outcome: 'refund' | 'release'; by: 'admin' | 'auto' }): Promise<DisputeView> {
    const disputeKey = providerLedgerKeys.providerDispute(this.keys, p.dispute_id);
    const [executionId, providerId] = await this.redis.hmget(disputeKey, 'execution_id', 'provider_id');
    if (!executionId || !providerId) throw notFound('dispute', p.dispute_id);
    const r = await resolveProviderDispute(this.redis, {
      disputeKey,
      entryKey: providerLedgerKeys.providerLedgerEntry(this.keys, executionId),
      balanceKey: providerLedgerKeys.providerBalance(this.keys, providerId),
      totalsKey: providerLedgerKeys.providerLedgerTotals(this.keys),
      openDisputesKey: providerLedgerKeys.providerDisputesOpen(this.keys),
      refundsDueKey: providerLedgerKeys.providerRefundsDue(this.keys),
      disputeId: p.dispute_id,
      outcome: p.outcome,
      resolvedBy: p.by,
      resolvedAt: iso(this.now()),
    });
    if (r.result === 'not_found') throw notFound('dispute', p.dispute_id);
    if (r.result === 'closed') throw new DisputeError('closed', `Dispute ${p.dispute_id} is resolved already (${r.status}).`);
    if (r.status === 'refunded') await this.enqueueRefund(p.dispute_id);
    return (await this.dispute(p.dispute_id))!.view;
  }

  /**
   * Resolves every dispute open for at least `olderThanSeconds` (PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS):
   * `release` when the provider answered, `refund` when not (`resolved_by: "auto"`).
   */
  async autoResolveDisputes(olderThanSeconds: number): Promise<{ released: string[]; refunded: string[] }> {
    const cutoff = this.now() - Math.round(olderThanSeconds * 1000);
    const ids = await this.redis.zrangebyscore(providerLedgerKeys.providerDisputesOpen(this.keys), '-inf', cutoff);
    const out = { released: [] as string[], refunded: [] as string[] };
    for (const id of ids) {
      const answered = Boolean(await this.redis.hget(providerLedgerKeys.providerDispute(this.keys, id), 'responded_at'));
      try {
        const view = await this.resolveDispute({ dispute_id: id, outcome: answered ? 'release' : 'refund', by: 'auto' });
        (view.status === 'released' ? out.released : out.refunded).push(id);
      } catch (e) {
        if (!(e instanceof DisputeError)) throw e; // resolved meanwhile
      }
    }
    return out;
  }

  /**
   * Enqueues the on-chain refunds of disputes resolved `refund` that are not enqueued yet (a crash
   * between the resolution and the enqueue, or a ledger without `refunds`). Idempotent (one refund
   * per dispute id). Returns the dispute ids enqueued now; none without `refunds`.
   */
  async enqueueDueRefunds(): Promise<string[]> {
    if (!this.refunds) return [];
    const ids = await this.redis.smembers(providerLedgerKeys.providerRefundsDue(this.keys));
    const done: string[] = [];
    for (const id of ids) if (await this.enqueueRefund(id)) done.push(id);
    return done;
  }

  private async enqueueRefund(disputeId: string): Promise<boolean> {
    if (!this.refunds) return false;
    const [executionId, payer, amount] = await this.redis.hmget(providerLedgerKeys.providerDispute(this.keys, disputeId), 'execution_id', 'payer', 'amount');
    const paymentTxHash = executionId ? await this.redis.hget(providerLedgerKeys.providerLedgerEntry(this.keys, executionId), 'payment_tx_hash') : null;
    if (!payer || !amount || !paymentTxHash) return false;
    await this.refunds.enqueue({ operationId: disputeId, payer: payer as Hex, amount, paymentTxHash: paymentTxHash as Hex });
    await this.redis.srem(providerLedgerKeys.providerRefundsDue(this.keys), disputeId);
    return true;
  }

  /**
   * The entry of `execution_id` names `txHash` as the payment's transaction from now on (a settlement a
   * reorg moved to another transaction: `TransferFinalityOptions.onSettlementMoved`); a dispute refund's
   * tag then names the payment on chain. Nothing when the execution has no entry. Source: docs/decisions.md
   * "Confirmations and reorgs".
   */
  async repointPayment(execution_id: string, txHash: Hex): Promise<void> {
    const key = providerLedgerKeys.providerLedgerEntry(this.keys, execution_id);
    if (await this.redis.exists(key)) await this.redis.hset(key, 'payment_tx_hash', txHash);
  }

  /** A dispute and its provider's address, or undefined. The view's `refund` is read from the refund record (`pending` until mined). */
  async dispute(dispute_id: string): Promise<StoredDispute | undefined> {
    const h = await this.redis.hgetall(providerLedgerKeys.providerDispute(this.keys, dispute_id));
    if (!h.status) return undefined;
    let refund: DisputeView['refund'] = null;
    if (h.status === 'refunded') {
      const r = await readRefund(this.redis, this.keys, dispute_id);
      refund = r?.status === 'sent' ? { status: 'sent', ...(r.tx_hash ? { tx_hash: r.tx_hash } : {}) } : { status: 'pending' };
    }
    return {
      provider_address: h.provider_address as Hex,
      view: {
        dispute_id: h.dispute_id,
        execution_id: h.execution_id,
        capability_id: h.capability_id,
        provider_id: h.provider_id,
        payer: h.payer,
        amount: h.amount,
        status: h.status as DisputeView['status'],
        reason: h.reason,
        statement: h.statement ?? null,
        opened_at: h.opened_at,
        responded_at: h.responded_at ?? null,
        resolved_at: h.resolved_at ?? null,
        resolved_by: (h.resolved_by as 'admin' | 'auto' | undefined) ?? null,
        refund,
      },
    };
  }

  // payouts

  /**
   * Reserves the provider's whole available balance for one payout when it is at least `minimum`
   * (and above zero): available → reserved, payout record `pay_<ULID>` in state `reserved`.
   * Returns the record, or undefined when nothing was reserved.
   */
  async reservePayout(provider_id: string, minimum: bigint): Promise<PayoutRecord | undefined> {
    const payoutId = `pay_${ulid()}`;
    const now = this.now();
    const amount = await reserveProviderPayout(this.redis, {
      balanceKey: providerLedgerKeys.providerBalance(this.keys, provider_id),
      payoutKey: providerLedgerKeys.providerPayout(this.keys, payoutId),
      providerPayoutsKey: providerLedgerKeys.providerPayouts(this.keys, provider_id),
      reservedKey: providerLedgerKeys.providerPayoutsReserved(this.keys),
      payoutId,
      providerId: provider_id,
      minimum,
      createdAt: iso(now),
      createdAtMs: now,
    });
    return amount === undefined ? undefined : this.payout(payoutId);
  }

  /** Payouts in state `reserved` (being sent, or interrupted): what a payout pass reconciles first. */
  async reservedPayouts(): Promise<PayoutRecord[]> {
    const ids = await this.redis.smembers(providerLedgerKeys.providerPayoutsReserved(this.keys));
    const records = await Promise.all(ids.map((id) => this.payout(id)));
    return records.filter((r): r is PayoutRecord => r !== undefined).sort((a, b) => a.payout_id.localeCompare(b.payout_id));
  }

  /** A payout record, or undefined. */
  async payout(payout_id: string): Promise<PayoutRecord | undefined> {
    const h = await this.redis.hgetall(providerLedgerKeys.providerPayout(this.keys, payout_id));
    if (!h.status) return undefined;
    return {
      payout_id: h.payout_id,
      provider_id: h.provider_id,
      address: h.address as Hex,
      amount: big(h.amount),
      status: h.status as PayoutStatus,
      created_at: h.created_at,
      tx_hash: (h.tx_hash as Hex | undefined) ?? null,
      ...(h.status === 'sent' ? { finality: h.finality === 'final' ? ('final' as const) : ('unconfirmed' as const) } : {}),
    };
  }

  /**
   * Finishes a reserved payout: `sent` (its transfer mined) moves the amount reserved → paid;
   * `failed` (reverted, or it would revert) returns it to available. Returns false when the payout
   * was not `reserved` (settled before: nothing changes).
   */
  async settlePayout(payout_id: string, outcome: 'sent' | 'failed', txHash?: Hex): Promise<boolean> {
    const providerId = await this.redis.hget(providerLedgerKeys.providerPayout(this.keys, payout_id), 'provider_id');
    if (!providerId) return false;
    return settleProviderPayout(this.redis, {
      payoutKey: providerLedgerKeys.providerPayout(this.keys, payout_id),
      balanceKey: providerLedgerKeys.providerBalance(this.keys, providerId),
      reservedKey: providerLedgerKeys.providerPayoutsReserved(this.keys),
      payoutId: payout_id,
      outcome,
      at: iso(this.now()),
      txHash,
    });
  }

  /**
   * Records a payout found on chain (`tx_hash`, `amount` integer USDC base units to `address`) that
   * Redis may not know as sent, e.g. after Redis lost its last writes (@acg/provider-ledger
   * `payoutChain.ts`), in one script: `known` (recorded sent already), `settled` (it was
   * `reserved`: reserved → paid), `adopted` (unknown or `failed`: available → paid, record `sent`),
   * `short` (unknown, and the available balance is below the amount: nothing changed; an operator
   * must decide). Idempotent.
   */
  adoptPayout(p: { payout_id: string; provider_id: string; address: Hex; amount: bigint; tx_hash: Hex }): Promise<AdoptPayoutResult> {
    const now = this.now();
    return adoptProviderPayout(this.redis, {
      payoutKey: providerLedgerKeys.providerPayout(this.keys, p.payout_id),
      balanceKey: providerLedgerKeys.providerBalance(this.keys, p.provider_id),
      providerPayoutsKey: providerLedgerKeys.providerPayouts(this.keys, p.provider_id),
      reservedKey: providerLedgerKeys.providerPayoutsReserved(this.keys),
      payoutId: p.payout_id,
      providerId: p.provider_id,
      address: p.address,
      amount: p.amount,
      txHash: p.tx_hash,
      at: iso(now),
      atMs: now,
    });
  }

  /** The signed transaction of a payout, kept in its record (`raw_tx`, `tx_hash`, `nonce`): the `TransferRecord` of its treasury transfer. */
  payoutTransferRecord(payout_id: string): TransferRecord {
    return storedTransferRecord(this.redis, this.payoutKey(payout_id));
  }

  /** The Redis hash of a payout record (it also holds the payout's signed transfer: {@link payoutTransferRecord}). */
  payoutKey(payout_id: string): string {
    return providerLedgerKeys.providerPayout(this.keys, payout_id);
  }
}

function payoutView(r: PayoutRecord): PayoutView {
  return {
    payout_id: r.payout_id,
    amount: r.amount.toString(),
    tx_hash: r.status === 'reserved' ? null : r.tx_hash,
    status: r.status,
    ...(r.finality ? { finality: r.finality } : {}),
    created_at: r.created_at,
  };
}

function notFound(what: 'execution' | 'dispute', id: string): DisputeError {
  return new DisputeError('not_found', what === 'execution' ? `No provider execution ${id} paid by you.` : `No dispute ${id}.`);
}
