import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of metered accounts and sign-in (SIWE nonces, bearer tokens). Each takes the deployment's {@link RedisKeys} (its prefix,
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
  /** A SIWE nonce issued for sign-in (string, short TTL). */
  siweNonce: (keys: RedisKeys, nonce: string): string => `${keys.prefix}auth:nonce:${nonce}`,
  /** A sign-in-with-x challenge the gateway issued (string: the resource URI it was issued for; short TTL). */
  siwxNonce: (keys: RedisKeys, nonce: string): string => `${keys.prefix}auth:siwx:issued:${nonce}`,
  /** A sign-in-with-x nonce already used (string: the address signed in; short TTL). */
  siwxNonceUsed: (keys: RedisKeys, nonce: string): string => `${keys.prefix}auth:siwx:${nonce}`,
  /** Key prefix of the per-address count of contract wallet sign-in checks (rate-limiter-flexible, one key per address). */
  siwxContractChecks: (keys: RedisKeys): string => `${keys.prefix}auth:siwx-contract`,
  /** A bearer token, by the sha256 hex of the token (the token itself is never stored). */
  bearerToken: (keys: RedisKeys, tokenHash: string): string => `${keys.prefix}auth:token:${tokenHash}`,
  /** The set of token hashes of a wallet (for revoke-all). */
  walletTokens: (keys: RedisKeys, address: string): string => `${keys.prefix}auth:wallet:${address.toLowerCase()}`,
};
