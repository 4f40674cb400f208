import { COMMAND_TIMEOUT_MS, type RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { takeTokens } from './commands/index.js';
import { rateLimitKeys } from './commands/keys.js';

/** Outcome of {@link TokenBucket.take}. */
export interface TakeResult {
  allowed: boolean;
  /** Tokens left after this request. */
  tokens: number;
  /** When refused: milliseconds until enough tokens are back (for `Retry-After`); 0 when allowed. */
  retryAfterMs: number;
  /** Redis clock at the decision, microseconds since the epoch. */
  nowUs: bigint;
}

/**
 * A token bucket per client id (docs/spec-notes.md 8: 10 requests/s per IP, burst 20), kept in Redis by the
 * `token_bucket` Lua script on the Redis clock (`TIME`), so every replica shares one exact,
 * atomic bucket per IP (docs/pitfalls.md: not a fixed window).
 */
export class TokenBucket {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    readonly opts: { scope: string; ratePerSecond: number; burst: number },
  ) {}

  /**
   * Takes `cost` tokens for `id` (e.g. an IP) if it has them. A take that Redis executes more than
   * 2 × COMMAND_TIMEOUT_MS after it was sent (Redis was frozen; the request got its 503 long ago)
   * takes nothing, so a backlog released when Redis resumes drains no bucket.
   */
  async take(id: string, cost = 1): Promise<TakeResult> {
    const r = await takeTokens(this.redis, {
      bucketKey: rateLimitKeys.rateLimit(this.keys, this.opts.scope, id),
      ratePerSecond: this.opts.ratePerSecond,
      burst: this.opts.burst,
      cost,
      sentAtMs: Date.now(),
      staleAfterMs: 2 * COMMAND_TIMEOUT_MS,
    });
    return { allowed: r.allowed, tokens: r.tokens, retryAfterMs: Math.ceil(r.retryAfterUs / 1000), nowUs: r.nowUs };
  }
}
