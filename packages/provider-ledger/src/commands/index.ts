import { scriptSet, withScripts } from '@acg/redis';
import type { Redis } from 'ioredis';

export { providerLedgerKeys } from './keys.js';

/**
 * The provider ledger of @acg/provider-ledger (packages/provider-ledger README): the Lua scripts in `./lua` (one file per script, loaded by name, as bullmq keeps its
 * commands), each called through a typed wrapper below with named arguments (as bullmq's
 * `addStandardJobArgs` builds KEYS and ARGV) and a typed result. Each wrapper defines its
 * scripts on the connection on first use (`withScripts`, idempotent).
 */
const SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), {
  pl_credit: 5,
  pl_mature: 3,
  pl_dispute_open: 5,
  pl_dispute_respond: 1,
  pl_dispute_resolve: 6,
  pl_credit_reverse: 6,
  pl_payout_reserve: 4,
  pl_payout_settle: 3,
  pl_payout_adopt: 4,
});

// provider ledger (@acg/provider-ledger; docs/decisions.md "Providers"). Amounts are integer strings, USDC
// base units; the scripts move them only with HINCRBY (64-bit), never through Lua numbers.

export interface CreditProviderParameters {
  /** `providerLedgerKeys.providerLedgerEntry(keys, executionId)` */
  entryKey: string;
  /** `providerLedgerKeys.providerBalance(keys, providerId)` */
  balanceKey: string;
  /** `providerLedgerKeys.providerMaturing(keys, providerId)` */
  maturingKey: string;
  /** `providerLedgerKeys.providerLedgerTotals(keys)` */
  totalsKey: string;
  /** `providerLedgerKeys.providerLedgerProviders(keys)` */
  providersKey: string;
  executionId: string;
  providerId: string;
  providerAddress: string;
  capabilityId: string;
  payer: string;
  /** integer base units: price = share + fee */
  price: bigint;
  share: bigint;
  fee: bigint;
  paymentTxHash: string;
  /** unix ms */
  creditedAtMs: number;
  /** unix ms: end of the dispute window */
  maturesAtMs: number;
}

/** `pl_credit.lua`: credits the share as held, once per execution. `credited` false: already credited (share and fee are the first credit's). */
export async function creditProvider(redis: Redis, p: CreditProviderParameters): Promise<{ credited: boolean; share: bigint; fee: bigint }> {
  const [credited, share, fee] = (await withScripts(redis, SCRIPTS).pl_credit(
    p.entryKey,
    p.balanceKey,
    p.maturingKey,
    p.totalsKey,
    p.providersKey,
    p.executionId,
    p.providerId,
    p.providerAddress,
    p.capabilityId,
    p.payer,
    p.price.toString(),
    p.share.toString(),
    p.fee.toString(),
    p.paymentTxHash,
    p.creditedAtMs,
    p.maturesAtMs,
  )) as [number, string, string];
  return { credited: credited === 1, share: BigInt(share), fee: BigInt(fee) };
}

/** `pl_mature.lua`: moves one held entry whose window passed (and that has no dispute) to available; true when moved. */
export async function matureProviderEntry(
  redis: Redis,
  p: { entryKey: string; balanceKey: string; maturingKey: string; executionId: string; nowMs: number },
): Promise<boolean> {
  return (await withScripts(redis, SCRIPTS).pl_mature(p.entryKey, p.balanceKey, p.maturingKey, p.executionId, p.nowMs)) === 1;
}

export interface OpenDisputeParameters {
  entryKey: string;
  /** `providerLedgerKeys.providerDispute(keys, disputeId)` */
  disputeKey: string;
  /** `providerLedgerKeys.providerDisputes(keys, providerId)` */
  providerDisputesKey: string;
  /** `providerLedgerKeys.providerDisputesOpen(keys)` */
  openDisputesKey: string;
  maturingKey: string;
  disputeId: string;
  /** the caller (must be the entry's payer), any case */
  caller: string;
  nowMs: number;
  reason: string;
  /** RFC 3339 */
  openedAt: string;
}

export type OpenDisputeReturnType =
  | { result: 'opened' }
  | { result: 'not_found' }
  | { result: 'window_passed' }
  | { result: 'already_disputed'; disputeId: string };

/** `pl_dispute_open.lua`: opens a dispute by the payer within the window, once per execution. */
export async function openProviderDispute(redis: Redis, p: OpenDisputeParameters): Promise<OpenDisputeReturnType> {
  const [result, id] = (await withScripts(redis, SCRIPTS).pl_dispute_open(
    p.entryKey,
    p.disputeKey,
    p.providerDisputesKey,
    p.openDisputesKey,
    p.maturingKey,
    p.disputeId,
    p.caller.toLowerCase(),
    p.nowMs,
    p.reason,
    p.openedAt,
  )) as [string, string?];
  return result === 'already_disputed' ? { result, disputeId: id! } : ({ result } as OpenDisputeReturnType);
}

/** `pl_dispute_respond.lua`: stores the provider's statement on an open dispute (caller must be its provider). */
export async function respondToProviderDispute(
  redis: Redis,
  p: { disputeKey: string; caller: string; statement: string; respondedAt: string },
): Promise<'responded' | 'not_found' | 'closed'> {
  return (await withScripts(redis, SCRIPTS).pl_dispute_respond(p.disputeKey, p.caller.toLowerCase(), p.statement, p.respondedAt)) as 'responded';
}

export interface ResolveDisputeParameters {
  disputeKey: string;
  entryKey: string;
  balanceKey: string;
  totalsKey: string;
  openDisputesKey: string;
  /** `providerLedgerKeys.providerRefundsDue(keys)` */
  refundsDueKey: string;
  disputeId: string;
  outcome: 'refund' | 'release';
  resolvedBy: 'admin' | 'auto';
  /** RFC 3339 */
  resolvedAt: string;
}

export type DisputeState = 'open' | 'refunded' | 'released';

/** `pl_dispute_resolve.lua`: resolves an open dispute (refund: share cancelled, fee reversed; release: share available). */
export async function resolveProviderDispute(
  redis: Redis,
  p: ResolveDisputeParameters,
): Promise<{ result: 'resolved'; status: DisputeState } | { result: 'not_found' } | { result: 'closed'; status: DisputeState }> {
  const [result, status] = (await withScripts(redis, SCRIPTS).pl_dispute_resolve(
    p.disputeKey,
    p.entryKey,
    p.balanceKey,
    p.totalsKey,
    p.openDisputesKey,
    p.refundsDueKey,
    p.outcome,
    p.resolvedBy,
    p.resolvedAt,
    p.disputeId,
  )) as [string, string?];
  if (result === 'not_found') return { result };
  return { result: result as 'resolved', status: status as DisputeState };
}

export interface ReverseProviderCreditParameters {
  /** `providerLedgerKeys.providerLedgerEntry(keys, executionId)` */
  entryKey: string;
  /** `providerLedgerKeys.providerBalance(keys, providerId)` */
  balanceKey: string;
  /** `providerLedgerKeys.providerMaturing(keys, providerId)` */
  maturingKey: string;
  /** `providerLedgerKeys.providerLedgerTotals(keys)` */
  totalsKey: string;
  /** `providerLedgerKeys.providerDisputesOpen(keys)` */
  openDisputesKey: string;
  /** `providerLedgerKeys.providerDispute(keys, disputeId)` */
  disputeKey: string;
  executionId: string;
  /** the entry's provider id as read ('' when no entry) */
  providerId: string;
  /** the entry's dispute id as read ('' when none) */
  disputeId: string;
  /** RFC 3339 */
  now: string;
  tombstoneTtlSeconds: number;
}

/** What {@link reverseProviderCredit} did (see `pl_credit_reverse.lua`). */
export type ReverseProviderCreditResult =
  | { result: 'reversed' | 'tombstone' | 'paid_out' | 'retry' }
  | { result: 'already_refunded'; by: 'dispute' | 'reversal' };

/** `pl_credit_reverse.lua`: reverses an execution's provider credit with its payment's refund, atomically. */
export async function reverseProviderCredit(redis: Redis, p: ReverseProviderCreditParameters): Promise<ReverseProviderCreditResult> {
  const [result, by] = (await withScripts(redis, SCRIPTS).pl_credit_reverse(
    p.entryKey,
    p.balanceKey,
    p.maturingKey,
    p.totalsKey,
    p.openDisputesKey,
    p.disputeKey,
    p.providerId,
    p.disputeId,
    p.now,
    p.executionId,
    String(p.tombstoneTtlSeconds),
  )) as [string, string?];
  if (result === 'already_refunded') return { result, by: by as 'dispute' | 'reversal' };
  return { result: result as 'reversed' | 'tombstone' | 'paid_out' | 'retry' };
}

export interface ReservePayoutParameters {
  balanceKey: string;
  /** `providerLedgerKeys.providerPayout(keys, payoutId)` */
  payoutKey: string;
  /** `providerLedgerKeys.providerPayouts(keys, providerId)` */
  providerPayoutsKey: string;
  /** `providerLedgerKeys.providerPayoutsReserved(keys)` */
  reservedKey: string;
  payoutId: string;
  providerId: string;
  /** integer base units; nothing is reserved below it (nor a zero balance) */
  minimum: bigint;
  /** RFC 3339 */
  createdAt: string;
  createdAtMs: number;
}

/** `pl_payout_reserve.lua`: moves the whole available balance to reserved for one payout; the amount, or undefined when below the minimum. */
export async function reserveProviderPayout(redis: Redis, p: ReservePayoutParameters): Promise<bigint | undefined> {
  const amount = (await withScripts(redis, SCRIPTS).pl_payout_reserve(
    p.balanceKey,
    p.payoutKey,
    p.providerPayoutsKey,
    p.reservedKey,
    p.payoutId,
    p.providerId,
    p.minimum.toString(),
    p.createdAt,
    p.createdAtMs,
  )) as string;
  return amount ? BigInt(amount) : undefined;
}

/** `pl_payout_settle.lua`: `sent` moves a reserved payout's amount to paid, `failed` back to available; true when settled now. */
export async function settleProviderPayout(
  redis: Redis,
  p: { payoutKey: string; balanceKey: string; reservedKey: string; payoutId: string; outcome: 'sent' | 'failed'; at: string; txHash?: string },
): Promise<boolean> {
  return (await withScripts(redis, SCRIPTS).pl_payout_settle(p.payoutKey, p.balanceKey, p.reservedKey, p.outcome, p.at, p.payoutId, p.txHash ?? '')) === 1;
}

/** What {@link adoptProviderPayout} found: see `pl_payout_adopt.lua`. */
export type AdoptPayoutResult = 'known' | 'settled' | 'adopted' | 'short';

/**
 * `pl_payout_adopt.lua`: records a payout found on chain that Redis does not know as sent
 * (`known` | `settled` | `adopted` | `short`; amounts integer USDC base units).
 */
export async function adoptProviderPayout(
  redis: Redis,
  p: {
    payoutKey: string;
    balanceKey: string;
    providerPayoutsKey: string;
    reservedKey: string;
    payoutId: string;
    providerId: string;
    address: string;
    amount: bigint;
    txHash: string;
    at: string;
    atMs: number;
  },
): Promise<AdoptPayoutResult> {
  return (await withScripts(redis, SCRIPTS).pl_payout_adopt(
    p.payoutKey,
    p.balanceKey,
    p.providerPayoutsKey,
    p.reservedKey,
    p.payoutId,
    p.providerId,
    p.address,
    p.amount.toString(),
    p.txHash,
    p.at,
    p.atMs,
  )) as AdoptPayoutResult;
}
