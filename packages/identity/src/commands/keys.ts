import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of sign-in (SIWE nonces, sign-in-with-x nonces, bearer tokens). Each takes the
 * deployment's {@link RedisKeys} (its prefix, `acg:` or `{acg}:` on a Redis Cluster) first, so every
 * key of a deployment shares its prefix. The names are the ones `@acg/accounts` used before the
 * split (issue 34): issued tokens stay valid.
 */
export const identityKeys = {
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
