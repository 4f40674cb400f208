import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of metered accounts (sign-in's are `identityKeys` of @acg/identity). Each takes the deployment's {@link RedisKeys} (its prefix,
 * `acg:` or `{acg}:` on a Redis Cluster) first, so every key of a deployment shares its prefix.
 */
export const accountKeys = {
  /** A metered account (hash: balance, spent, deposited; USDC base units). */
  account: (keys: RedisKeys, address: string): string => `${keys.prefix}acct:${address.toLowerCase()}`,
  /** Usage lines of an account (list, newest first). */
  accountUsage: (keys: RedisKeys, address: string): string => `${keys.prefix}acct:${address.toLowerCase()}:usage`,
  /**
   * Bearer calls between their debit and their outcome (zset: member `address|ref|amount|item`,
   * score = when the call started, unix ms): the intent that the recovery sweep completes by
   * crediting back a call that never ended (`Ledger.recoverOpenCalls` of @acg/accounts).
   */
  accountOpenCalls: (keys: RedisKeys): string => `${keys.prefix}acct:open-calls`,
  /** Marks a debit or credit reference as applied. */
  accountRef: (keys: RedisKeys, address: string, ref: string): string => `${keys.prefix}acct:${address.toLowerCase()}:ref:${ref}`,
};
