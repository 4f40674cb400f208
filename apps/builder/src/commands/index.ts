import { scriptSet, withScripts } from '@acg/redis';
import type { Redis } from 'ioredis';

export { rateLimitKeys } from './keys.js';

/**
 * The builder RPC rate limit (apps/builder README): the Lua scripts in `./lua` (one file per script, loaded by name, as bullmq keeps its
 * commands), each called through a typed wrapper below with named arguments (as bullmq's
 * `addStandardJobArgs` builds KEYS and ARGV) and a typed result. Each wrapper defines its
 * scripts on the connection on first use (`withScripts`, idempotent).
 */
const SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), {
  token_bucket: 1,
});

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
  const [allowed, tokens, retryUs, nowUs] = (await withScripts(redis, SCRIPTS).token_bucket(
    p.bucketKey,
    p.ratePerSecond,
    p.burst,
    p.cost,
    ...(p.sentAtMs !== undefined && p.staleAfterMs !== undefined ? [p.sentAtMs, p.staleAfterMs] : []),
  )) as [number, string, number, string];
  return { allowed: allowed === 1, tokens: Number(tokens), retryAfterUs: Number(retryUs), nowUs: BigInt(nowUs) };
}
