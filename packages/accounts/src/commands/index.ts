import { scriptSet, withScripts } from '@acg/redis';
import type { Redis } from 'ioredis';

export { accountKeys } from './keys.js';

/**
 * The metered accounts of @acg/accounts (packages/accounts README): the Lua scripts in `./lua` (one file per script, loaded by name, as bullmq keeps its
 * commands), each called through a typed wrapper below with named arguments (as bullmq's
 * `addStandardJobArgs` builds KEYS and ARGV) and a typed result. Each wrapper defines its
 * scripts on the connection on first use (`withScripts`, idempotent).
 */
const SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), {
  debit_account: 3,
  credit_account: 3,
});

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
  const [status, balance] = (await withScripts(redis, SCRIPTS)[script](
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
