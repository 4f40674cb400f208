import type { Redis } from 'ioredis';
import { withScripts } from './scripts.js';

/**
 * Typed wrappers of the Lua scripts in `./lua`, one per script, with named arguments (as
 * bullmq's `addStandardJobArgs` builds a script's KEYS and ARGV): each builds the positional
 * arrays the script documents and turns its reply into a typed result. Each defines the scripts
 * on the connection on first use (`withScripts`, idempotent).
 */

/**
 * The life of an x402 authorization reservation (docs/decisions.md "x402 payments"):
 * `pending` (reserved, settlement not seen) → `completed` (settled, answer stored);
 * `pending` → `settle_unknown` (settlement outcome not seen; reconciled on chain);
 * `settled` (settlement seen, operation running: set when a replay reconciles a settled payment);
 * `recovering` (the crash-recovery sweep took it over to refund it) → `completed`.
 * A reservation released (nothing charged) is deleted, see {@link releaseAuthorization}.
 */
export type AuthorizationState = 'pending' | 'settle_unknown' | 'settled' | 'recovering' | 'completed';

export const AUTHORIZATION_STATES: readonly AuthorizationState[] = ['pending', 'settle_unknown', 'settled', 'recovering', 'completed'];

/** A reservation as stored in its hash (the fields the paywall reads back). */
export interface AuthorizationRecord {
  state: AuthorizationState;
  requestHash: string;
  payloadHash: string;
  operationId: string;
  /** last progress, unix milliseconds */
  updatedAtMs: number;
}

export interface ReserveAuthorizationParameters {
  /** `RedisKeys.authorization(network, asset, from, nonce)` */
  authKey: string;
  /** `RedisKeys.authorizationsInFlight()` */
  inFlightKey: string;
  /** sha256 of method, path and canonical body (`requestHash`) */
  requestHash: string;
  /** sha256 of the PaymentPayload's signed part */
  payloadHash: string;
  /** operation id of this request, e.g. `exe_...` */
  operationId: string;
  /** now, unix milliseconds */
  nowMs: number;
  /** how long the reservation is kept, seconds */
  retentionSeconds: number;
  /** asset contract, payer, EIP-3009 nonce and amount (integer base units): what a recovery needs */
  asset: string;
  from: string;
  nonce: string;
  amount: string;
}

export type ReserveAuthorizationReturnType = { reserved: true } | { reserved: false; existing: AuthorizationRecord };

/**
 * `reserve_authorization.lua`: reserves (from, nonce) in state `pending` and adds it to the
 * in-flight set, unless a reservation exists: then returns it (a replay or a concurrent duplicate).
 */
export async function reserveAuthorization(redis: Redis, p: ReserveAuthorizationParameters): Promise<ReserveAuthorizationReturnType> {
  const r = (await withScripts(redis).reserve_authorization(
    p.authKey,
    p.inFlightKey,
    p.requestHash,
    p.payloadHash,
    p.operationId,
    p.nowMs,
    p.retentionSeconds,
    p.asset,
    p.from,
    p.nonce,
    p.amount,
  )) as string[];
  if (r[0] === 'reserved') return { reserved: true };
  return {
    reserved: false,
    existing: { state: r[1] as AuthorizationState, requestHash: r[2], payloadHash: r[3], operationId: r[4], updatedAtMs: Number(r[5] || 0) },
  };
}

/** Reads a reservation (one HMGET); undefined when there is none. */
export async function readAuthorization(redis: Redis, authKey: string): Promise<AuthorizationRecord | undefined> {
  const [state, requestHash, payloadHash, operationId, updatedAt] = await redis.hmget(
    authKey,
    'state',
    'request_hash',
    'payload_hash',
    'operation_id',
    'updated_at',
  );
  if (!state) return undefined;
  return {
    state: state as AuthorizationState,
    requestHash: requestHash ?? '',
    payloadHash: payloadHash ?? '',
    operationId: operationId ?? '',
    updatedAtMs: Number(updatedAt ?? 0),
  };
}

export interface TransitionAuthorizationParameters {
  authKey: string;
  inFlightKey: string;
  /** the operation that must hold the reservation */
  operationId: string;
  /** states it must be in */
  from: readonly AuthorizationState[];
  to: AuthorizationState;
  nowMs: number;
  /** hash fields stored with the new state (e.g. `tx_hash`, `response`) */
  fields?: Record<string, string>;
}

/**
 * `transition_authorization.lua`: compare-and-set of a reservation's state (holder and state must
 * match). Returns true when applied. `completed` leaves the in-flight set; any other state
 * updates its progress time there.
 */
export async function transitionAuthorization(redis: Redis, p: TransitionAuthorizationParameters): Promise<boolean> {
  const fields = Object.entries(p.fields ?? {}).flat();
  const r = await withScripts(redis).transition_authorization(p.authKey, p.inFlightKey, p.operationId, p.from.join(','), p.to, p.nowMs, ...fields);
  return r === 1;
}

export interface ReleaseAuthorizationParameters {
  authKey: string;
  inFlightKey: string;
  operationId: string;
  /** states it may be released from (never `completed`) */
  from: readonly Exclude<AuthorizationState, 'completed'>[];
}

/** `release_authorization.lua`: deletes a reservation nothing was charged for (holder and state must match). Returns true when released. */
export async function releaseAuthorization(redis: Redis, p: ReleaseAuthorizationParameters): Promise<boolean> {
  return (await withScripts(redis).release_authorization(p.authKey, p.inFlightKey, p.operationId, p.from.join(','))) === 1;
}

export interface ClaimIdempotencyKeyParameters {
  /** `RedisKeys.idempotency(route, key)` */
  idempotencyKey: string;
  requestHash: string;
  /** authorization key the request is paid with */
  authKey: string;
  ttlSeconds: number;
}

export type ClaimIdempotencyKeyReturnType = { claimed: true } | { claimed: false; requestHash: string; authKey: string };

/** `claim_idempotency_key.lua`: binds an Idempotency-Key to one request and its payment, unless already bound. */
export async function claimIdempotencyKey(redis: Redis, p: ClaimIdempotencyKeyParameters): Promise<ClaimIdempotencyKeyReturnType> {
  const r = (await withScripts(redis).claim_idempotency_key(p.idempotencyKey, p.requestHash, p.authKey, p.ttlSeconds)) as string[];
  return r[0] === 'claimed' ? { claimed: true } : { claimed: false, requestHash: r[1], authKey: r[2] };
}

export interface ReleaseBindingParameters {
  /** `RedisKeys.idempotency(route, key)` or `RedisKeys.paymentIdentifier(id)` */
  bindingKey: string;
  /** the authorization key the binding must point to */
  authKey: string;
}

/**
 * `release_binding.lua`: unbinds a key bound by {@link claimIdempotencyKey} when it still points to
 * `authKey` (a payment refused before it was charged). Returns true when unbound.
 */
export async function releaseBinding(redis: Redis, p: ReleaseBindingParameters): Promise<boolean> {
  return (await withScripts(redis).release_binding(p.bindingKey, p.authKey)) === 1;
}

export interface TokenBucketParameters {
  bucketKey: string;
  /** refill, tokens per second (> 0) */
  ratePerSecond: number;
  /** capacity, tokens */
  burst: number;
  /** tokens this request takes */
  cost: number;
  /**
   * When the request was sent, unix ms (this process's clock), and the age past which Redis treats
   * it as stale (allowed, no token taken): a command Redis executes late because it was frozen.
   * Both or neither; the age must exceed the clock skew between this host and Redis's.
   */
  sentAtMs?: number;
  staleAfterMs?: number;
}

export interface TokenBucketReturnType {
  allowed: boolean;
  /** tokens left (fractional) */
  tokens: number;
  /** 0 when allowed, microseconds */
  retryAfterUs: number;
  /** Redis `TIME`, microseconds */
  nowUs: bigint;
}

/** `token_bucket.lua`: takes `cost` tokens from a bucket refilled continuously on the Redis clock. */
export async function takeTokens(redis: Redis, p: TokenBucketParameters): Promise<TokenBucketReturnType> {
  const [allowed, tokens, retryUs, nowUs] = (await withScripts(redis).token_bucket(
    p.bucketKey,
    p.ratePerSecond,
    p.burst,
    p.cost,
    ...(p.sentAtMs !== undefined && p.staleAfterMs !== undefined ? [p.sentAtMs, p.staleAfterMs] : []),
  )) as [number, string, number, string];
  return { allowed: allowed === 1, tokens: Number(tokens), retryAfterUs: Number(retryUs), nowUs: BigInt(nowUs) };
}

export interface AccountEntryParameters {
  /** account hash (field `balance`, integer USDC base units) */
  accountKey: string;
  /** usage list, newest first */
  usageKey: string;
  /** marks this debit or credit as done */
  referenceKey: string;
  /** integer base units (> 0) */
  amount: bigint | string;
  /** usage line (JSON) */
  usageLine: string;
  maxUsageLines: number;
  referenceTtlSeconds: number;
}

export interface AccountEntryReturnType {
  /** `applied` now, `already` applied with this reference before, `insufficient` (debits only; nothing changed) */
  status: 'applied' | 'already' | 'insufficient';
  /** balance after, integer base units */
  balance: string;
}

const ENTRY_STATUS = { 0: 'insufficient', 1: 'applied', 2: 'already' } as const;

async function accountEntry(redis: Redis, script: 'debit_account' | 'credit_account', p: AccountEntryParameters): Promise<AccountEntryReturnType> {
  const [status, balance] = (await withScripts(redis)[script](
    p.accountKey,
    p.usageKey,
    p.referenceKey,
    p.amount.toString(),
    p.usageLine,
    p.maxUsageLines,
    p.referenceTtlSeconds,
  )) as [0 | 1 | 2, string];
  return { status: ENTRY_STATUS[status], balance };
}

/** `debit_account.lua`: debits atomically, never below zero, at most once per reference. */
export function debitAccount(redis: Redis, p: AccountEntryParameters): Promise<AccountEntryReturnType> {
  return accountEntry(redis, 'debit_account', p);
}

/** `credit_account.lua`: credits at most once per reference (status never `insufficient`). */
export function creditAccount(redis: Redis, p: AccountEntryParameters): Promise<AccountEntryReturnType> {
  return accountEntry(redis, 'credit_account', p);
}

export interface AddBundleParameters {
  /** builder stats hash (`bids_received`) */
  statsKey: string;
  /** the searcher's bundle counters (`builder:searcher:<address>`) */
  searcherKey: string;
  /** the searcher's metered account hash (`RedisKeys.account`) and its usage list (`RedisKeys.accountUsage`) */
  accountKey: string;
  usageKey: string;
  /** the searcher's replacement-uuid key (any key of the deployment when `uuidValue` is empty) */
  uuidKey: string;
  /** `<first block>|<pool field>`, or '' when the bundle has no replacement uuid */
  uuidValue: string;
  /** the searcher's priced-bundle marker of this bundle's identity (same transactions and block, or same uuid and block): set once priced, for the pool TTL */
  pricedKey: string;
  /** per target block: pool hash, bundle-stats hash and the stored bundle (JSON) */
  blocks: readonly { poolKey: string; statsKey: string; json: string }[];
  /** pool field, `<searcher>:<bundle_hash>` */
  field: string;
  /** stats field of the receipt, `recv:<searcher>` */
  receiptField: string;
  receivedAtMs: number;
  receivedAtIso: string;
  /** required tx hashes, comma-separated */
  requiredTxs: string;
  poolTtlSeconds: number;
  statsTtlSeconds: number;
  /** price of one bundle, integer base units */
  amount: bigint | string;
  /** `x402`: already paid; `rpc`: from the metered account when it holds the price, else owed */
  paidBy: 'x402' | 'rpc';
  /** usage line (JSON) written when the account pays */
  usageLine: string;
  maxUsageLines: number;
}

/** What `bundle_add.lua` did: how the bundle was priced, the account balance after, and the uuid key's former value. */
export interface AddBundleReturnType {
  charged: 'paid' | 'debited' | 'owed';
  /** integer base units ('' for x402) */
  balance: string;
  /** the replacement-uuid key's former value (`<block>|<field>`), or undefined */
  previous?: string;
  /** true when this searcher's bundle was already priced (a resend): `charged` is how the first was priced, nothing moved now */
  resent: boolean;
}

/**
 * `bundle_add.lua`: queues one accepted bundle in the pool of each target block, records its
 * receipt, counts it and prices it (x402: paid; else debited from the searcher's metered account
 * when it holds the price, or owed), and swaps its replacement uuid, atomically in one round trip.
 * A bundle whose `pricedKey` is set (a resend) is stored again but neither counted nor priced.
 */
export async function addBundle(redis: Redis, p: AddBundleParameters): Promise<AddBundleReturnType> {
  const keys = [p.statsKey, p.searcherKey, p.accountKey, p.usageKey, p.uuidKey, p.pricedKey, ...p.blocks.flatMap((b) => [b.poolKey, b.statsKey])];
  const [charged, balance, previous, resent] = (await withScripts(redis).bundle_add(
    keys.length,
    ...keys,
    p.field,
    p.receiptField,
    p.receivedAtMs,
    p.receivedAtIso,
    p.requiredTxs,
    p.poolTtlSeconds,
    p.statsTtlSeconds,
    p.amount.toString(),
    p.paidBy,
    p.uuidValue,
    p.usageLine,
    p.maxUsageLines,
    ...p.blocks.map((b) => b.json),
  )) as [0 | 1 | 2, string, string, 0 | 1];
  return { charged: charged === 2 ? 'paid' : charged === 1 ? 'debited' : 'owed', balance, previous: previous || undefined, resent: resent === 1 };
}

export interface CancelSubscriptionParameters {
  subscriptionKey: string;
  expiryKey: string;
  /** caller address, any case (compared lowercase) */
  caller: string;
  /** unix seconds */
  nowSeconds: number;
  subscriptionId: string;
}

/** `wm_cancel_subscription.lua`: cancels a wallet-monitor subscription, owner only, idempotent. `cancelledAt` is unix seconds ('' unless cancelled/already). */
export async function cancelSubscription(
  redis: Redis,
  p: CancelSubscriptionParameters,
): Promise<{ result: 'not_found' | 'forbidden' | 'cancelled' | 'already'; cancelledAt: string }> {
  const [result, at] = (await withScripts(redis).wm_cancel_subscription(
    p.subscriptionKey,
    p.expiryKey,
    p.caller.toLowerCase(),
    p.nowSeconds,
    p.subscriptionId,
  )) as [string, string];
  return { result: result as 'not_found', cancelledAt: at };
}

export interface RenewSubscriptionParameters {
  subscriptionKey: string;
  /** the owner's metered account hash */
  accountKey: string;
  expiryKey: string;
  nowSeconds: number;
  termSeconds: number;
  /** balance needed to renew, integer base units */
  minBalance: bigint | string;
  subscriptionId: string;
}

/** `wm_renew_subscription.lua`: renews (by whole terms) or expires one due subscription. `expiresAt` is unix seconds. */
export async function renewSubscription(
  redis: Redis,
  p: RenewSubscriptionParameters,
): Promise<{ result: 'missing' | 'inactive' | 'not_due' | 'renewed' | 'expired'; expiresAt: string }> {
  const [result, at] = (await withScripts(redis).wm_renew_subscription(
    p.subscriptionKey,
    p.accountKey,
    p.expiryKey,
    p.nowSeconds,
    p.termSeconds,
    p.minBalance.toString(),
    p.subscriptionId,
  )) as [string, string];
  return { result: result as 'missing', expiresAt: at };
}

/** `wm_lease.lua`: takes or extends a lease for `holder`; true when the caller holds it. */
export async function takeLease(redis: Redis, p: { leaseKey: string; holder: string; leaseMs: number }): Promise<boolean> {
  return (await withScripts(redis).wm_lease(p.leaseKey, p.holder, p.leaseMs)) === 1;
}

export interface LiquidationSearchParameters {
  metaKey: string;
  positionsKey: string;
  healthFactorsKey: string;
  /** the four per-protocol sorted sets, in the order aave_v3, spark, compound_v3, morpho_blue */
  opportunityKeys: readonly [string, string, string, string];
  /** decimal strings, inclusive */
  minProfitUsd: string;
  maxHealthFactor: string;
  limit: number;
  /** one flag per opportunity set: include it */
  include: readonly [boolean, boolean, boolean, boolean];
}

/**
 * `liquidation_search.lua`: the top opportunities of one consistent index block; `blockNumber`
 * undefined when never indexed; `version` the meta hash's write counter at that read (undefined for
 * an index written before the counter existed).
 */
export async function liquidationSearch(
  redis: Redis,
  p: LiquidationSearchParameters,
): Promise<{ blockNumber?: string; version?: string; documents: string[] }> {
  const out = (await withScripts(redis).liquidation_search(
    p.metaKey,
    p.positionsKey,
    p.healthFactorsKey,
    ...p.opportunityKeys,
    p.minProfitUsd,
    p.maxHealthFactor,
    p.limit,
    p.include.map((b) => (b ? '1' : '0')).join(''),
  )) as string[];
  return { blockNumber: out[0] || undefined, version: out[1] || undefined, documents: out.slice(2) };
}

/** `release_lease.lua`: releases a lease taken with {@link takeLease}, only by its holder; true when released. */
export async function releaseLease(redis: Redis, p: { leaseKey: string; holder: string }): Promise<boolean> {
  return (await withScripts(redis).release_lease(p.leaseKey, p.holder)) === 1;
}

/** `hdel_if_equal.lua`: deletes `fields` of a hash only while `field` still equals `expected`; true when deleted. */
export async function deleteFieldsIfEqual(redis: Redis, p: { key: string; field: string; expected: string; fields: readonly string[] }): Promise<boolean> {
  return (await withScripts(redis).hdel_if_equal(p.key, p.field, p.expected, ...p.fields)) === 1;
}

// provider ledger (@acg/provider-ledger; docs/decisions.md "Providers"). Amounts are integer strings, USDC
// base units; the scripts move them only with HINCRBY (64-bit), never through Lua numbers.

export interface CreditProviderParameters {
  /** `RedisKeys.providerLedgerEntry(executionId)` */
  entryKey: string;
  /** `RedisKeys.providerBalance(providerId)` */
  balanceKey: string;
  /** `RedisKeys.providerMaturing(providerId)` */
  maturingKey: string;
  /** `RedisKeys.providerLedgerTotals()` */
  totalsKey: string;
  /** `RedisKeys.providerLedgerProviders()` */
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
  const [credited, share, fee] = (await withScripts(redis).pl_credit(
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
  return (await withScripts(redis).pl_mature(p.entryKey, p.balanceKey, p.maturingKey, p.executionId, p.nowMs)) === 1;
}

export interface OpenDisputeParameters {
  entryKey: string;
  /** `RedisKeys.providerDispute(disputeId)` */
  disputeKey: string;
  /** `RedisKeys.providerDisputes(providerId)` */
  providerDisputesKey: string;
  /** `RedisKeys.providerDisputesOpen()` */
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
  const [result, id] = (await withScripts(redis).pl_dispute_open(
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
  return (await withScripts(redis).pl_dispute_respond(p.disputeKey, p.caller.toLowerCase(), p.statement, p.respondedAt)) as 'responded';
}

export interface ResolveDisputeParameters {
  disputeKey: string;
  entryKey: string;
  balanceKey: string;
  totalsKey: string;
  openDisputesKey: string;
  /** `RedisKeys.providerRefundsDue()` */
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
  const [result, status] = (await withScripts(redis).pl_dispute_resolve(
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
  /** `RedisKeys.providerLedgerEntry(executionId)` */
  entryKey: string;
  /** `RedisKeys.providerBalance(providerId)` */
  balanceKey: string;
  /** `RedisKeys.providerMaturing(providerId)` */
  maturingKey: string;
  /** `RedisKeys.providerLedgerTotals()` */
  totalsKey: string;
  /** `RedisKeys.providerDisputesOpen()` */
  openDisputesKey: string;
  /** `RedisKeys.providerDispute(disputeId)` */
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
  const [result, by] = (await withScripts(redis).pl_credit_reverse(
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
  /** `RedisKeys.providerPayout(payoutId)` */
  payoutKey: string;
  /** `RedisKeys.providerPayouts(providerId)` */
  providerPayoutsKey: string;
  /** `RedisKeys.providerPayoutsReserved()` */
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
  const amount = (await withScripts(redis).pl_payout_reserve(
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
  return (await withScripts(redis).pl_payout_settle(p.payoutKey, p.balanceKey, p.reservedKey, p.outcome, p.at, p.payoutId, p.txHash ?? '')) === 1;
}
