import type { AccountUsageLine, AccountView } from '@acg/schemas';
import type { RedisKeys } from '@acg/redis';
import { creditAccount, debitAccount, type AccountEntryParameters } from './commands/index.js';
import type { Redis } from 'ioredis';
import { InsufficientBalanceError } from './errors.js';
import { accountKeys } from './commands/keys.js';

/**
 * One line of account usage (newest first in `GET /v1/account`; schema `AccountUsageLine`): `kind`
 * `debit | credit`, `amount` (integer string, USDC base units), `item` (what it paid for, e.g.
 * `mev.liquidation_search` or `deposit`), `ref` (idempotency reference) and `at` (RFC 3339 UTC).
 */
export type UsageLine = AccountUsageLine;

/** `GET /v1/account` (schema `AccountView`): balances in integer USDC base units (strings) and recent usage. */
export type { AccountView };

const MAX_USAGE_LINES = 1000;
const REF_TTL_SECONDS = 30 * 24 * 3600;
/** How a reference key tells a debit's reference from a credit's. */
const REFERENCE_MARK = { debit: 'd', credit: 'c' } as const;

/**
 * Metered accounts in USDC base units (docs/decisions.md "Accounts and bearer tokens"). Debits and credits
 * are Lua scripts: atomic, never negative, and applied at most once per reference, so a retried
 * webhook delivery or deposit can never bill or credit twice.
 */
export class Ledger {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /**
   * Debits `amount` (integer base units) for `item`, once per `ref`. Returns the balance after.
   * Throws InsufficientBalanceError (nothing debited) when the balance is lower.
   */
  async debit(address: string, amount: bigint, item: string, ref: string): Promise<{ balance: bigint; applied: boolean }> {
    const { status, balance } = await debitAccount(this.redis, this.entry('debit', address, amount, item, ref));
    if (status === 'insufficient') throw new InsufficientBalanceError(balance, amount.toString());
    return { balance: BigInt(balance), applied: status === 'applied' };
  }

  /**
   * Whether a debit with `ref` was applied to `address` (within the reference's 30-day memory):
   * lets a caller that holds a price refund it only if it was really taken, without keeping its
   * own flag (which a crash between the debit and writing the flag would lose).
   */
  async debited(address: string, ref: string): Promise<boolean> {
    return (await this.redis.exists(this.referenceKey('debit', address, ref))) === 1;
  }

  /** Credits `amount` (integer base units) once per `ref`. Returns the balance after. */
  async credit(address: string, amount: bigint, item: string, ref: string): Promise<{ balance: bigint; applied: boolean }> {
    const { status, balance } = await creditAccount(this.redis, this.entry('credit', address, amount, item, ref));
    return { balance: BigInt(balance), applied: status === 'applied' };
  }

  /** Whether a credit with `ref` was applied to `address` (within the reference's 30-day memory). */
  async credited(address: string, ref: string): Promise<boolean> {
    return (await this.redis.exists(this.referenceKey('credit', address, ref))) === 1;
  }

  /** What one debit or credit of `amount` (integer base units) for `item` writes: its usage line and keys, marked done under `ref`. */
  private entry(kind: UsageLine['kind'], address: string, amount: bigint, item: string, ref: string): AccountEntryParameters {
    const line: UsageLine = { kind, amount: amount.toString(), item, ref, at: new Date().toISOString() };
    return {
      accountKey: accountKeys.account(this.keys, address),
      usageKey: accountKeys.accountUsage(this.keys, address),
      referenceKey: this.referenceKey(kind, address, ref),
      amount,
      usageLine: JSON.stringify(line),
      maxUsageLines: MAX_USAGE_LINES,
      referenceTtlSeconds: REF_TTL_SECONDS,
    };
  }

  /** The key that marks a debit (`d:<ref>`) or credit (`c:<ref>`) of `address` applied, for 30 days. */
  private referenceKey(kind: UsageLine['kind'], address: string, ref: string): string {
    return accountKeys.accountRef(this.keys, address, `${REFERENCE_MARK[kind]}:${ref}`);
  }

  /**
   * Takes back the credit `ref` of `amount` (e.g. a deposit whose payment is being refunded: the
   * paywall's `CreditReversal`), once: a debit with reference `rev:<ref>` and item
   * `reversal:<item>`, only when that credit was applied. Returns `reversed`, `none` (no such
   * credit, or reversed already) or `paid_out` (the balance no longer holds it: nothing changed).
   */
  async reverseCredit(address: string, amount: bigint, item: string, ref: string): Promise<'reversed' | 'none' | 'paid_out'> {
    if (!(await this.credited(address, ref))) return 'none';
    try {
      const r = await this.debit(address, amount, `reversal:${item}`, `rev:${ref}`);
      return r.applied ? 'reversed' : 'none';
    } catch (e) {
      if (e instanceof InsufficientBalanceError) return 'paid_out';
      throw e;
    }
  }

  /**
   * Records the intent of a bearer call paid by debit (`ref`, `amount` for `item`) before the debit
   * is taken: until {@link closeCall}, the call is open, and {@link recoverOpenCalls} credits back
   * an open call whose debit was applied (the process stopped before the call ended or its
   * credit-back was written). One sorted-set member per call.
   */
  async openCall(address: string, amount: bigint, item: string, ref: string, nowMs = Date.now()): Promise<void> {
    await this.redis.zadd(accountKeys.accountOpenCalls(this.keys), nowMs, openCallMember(address, amount, item, ref));
  }

  /** Ends a call opened by {@link openCall}: it succeeded, or its credit-back was written. */
  async closeCall(address: string, amount: bigint, item: string, ref: string): Promise<void> {
    await this.redis.zrem(accountKeys.accountOpenCalls(this.keys), openCallMember(address, amount, item, ref));
  }

  /**
   * The recovery sweep of bearer calls (README "Money rules"): every call open for longer than
   * `olderThanMs` whose debit was applied is credited back (item `refund:<item>`, reference = the
   * call's, so at most once, also against the call's own credit-back), then closed. Returns the
   * references credited back.
   */
  async recoverOpenCalls(olderThanMs: number, nowMs = Date.now()): Promise<string[]> {
    const members = await this.redis.zrangebyscore(accountKeys.accountOpenCalls(this.keys), '-inf', nowMs - olderThanMs, 'LIMIT', 0, 100);
    const credited: string[] = [];
    for (const member of members) {
      const [address, ref, amount, item] = member.split('|');
      if (address && ref && amount && item && (await this.debited(address, ref))) {
        const r = await this.credit(address, BigInt(amount), `refund:${item}`, ref);
        if (r.applied) credited.push(ref);
      }
      await this.redis.zrem(accountKeys.accountOpenCalls(this.keys), member);
    }
    return credited;
  }

  /** Balance in integer base units (0 for an account never credited). */
  async balance(address: string): Promise<bigint> {
    return BigInt((await this.redis.hget(accountKeys.account(this.keys, address), 'balance')) ?? '0');
  }

  /** The account view with up to `limit` usage lines. */
  async view(address: `0x${string}`, limit = 100): Promise<AccountView> {
    const [h, lines] = await Promise.all([
      this.redis.hgetall(accountKeys.account(this.keys, address)),
      this.redis.lrange(accountKeys.accountUsage(this.keys, address), 0, limit - 1),
    ]);
    return {
      address,
      balance: h.balance ?? '0',
      spent: h.spent ?? '0',
      deposited: h.deposited ?? '0',
      usage: lines.map((l) => JSON.parse(l) as UsageLine),
    };
  }
}

/** The open-calls member of one bearer call (see {@link Ledger.openCall}). */
function openCallMember(address: string, amount: bigint, item: string, ref: string): string {
  return `${address.toLowerCase()}|${ref}|${amount}|${item}`;
}
