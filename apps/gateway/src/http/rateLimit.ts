import type { IncomingMessage } from 'node:http';
import { rateLimitIncrScript, type RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Per-IP request limit of the gateway's own endpoints (docs/spec-notes.md 8 leaves them "not shown"; docs/decisions.md
 * "Errors": 429 with Retry-After). `rate-limiter-flexible` on the shared Redis, so every replica
 * counts the same requests: `perSecond` requests per IP per second (fixed window). Its increment is
 * `rateLimitIncrScript()` of @acg/redis (the library's `customIncrTtlLuaScript` option): the same
 * counting, kept out of the AOF, since under `appendfsync always` every request otherwise waited for
 * an fsync before anything else ran (bench/README.md "Paid execute"). The cached discovery documents are not limited (docs/spec-notes.md 8: "reasonable
 * use; response cached 60 s"); the bundle RPC has its own token bucket. `perSecond` 0 disables the limit.
 */
export class GatewayRateLimit {
  private readonly limiter?: RateLimiterRedis;
  constructor(
    redis: Redis,
    keys: RedisKeys,
    readonly perSecond: number,
    private readonly trustProxy = false,
  ) {
    if (perSecond > 0) {
      this.limiter = new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${keys.prefix}rl:gateway`,
        points: perSecond,
        duration: 1,
        customIncrTtlLuaScript: rateLimitIncrScript(),
      });
    }
  }

  /** The client IP: the socket peer, or with TRUST_PROXY the last X-Forwarded-For hop. */
  clientIp(req: IncomingMessage): string {
    if (this.trustProxy) {
      const xff = String(req.headers['x-forwarded-for'] ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (xff.length > 0) return xff[xff.length - 1];
    }
    return req.socket.remoteAddress ?? 'unknown';
  }

  /**
   * Counts one request of `req`'s IP. Returns undefined when allowed, else the seconds to wait.
   * A Redis failure lets the request through (the limit protects, it must not take the service down;
   * the request's own Redis work then answers 503 during an outage).
   *
   * The window is named by this process's clock (`<ip>:<unix second>`), not opened by the first
   * count Redis sees: counts sent just before Redis froze, which Redis executes when it resumes,
   * land in the windows of their own (past) seconds, so they never add up to a burst of 429s
   * after the outage (docs/operating.md "Redis outage tolerance").
   */
  async take(req: IncomingMessage): Promise<number | undefined> {
    if (!this.limiter) return undefined;
    try {
      await this.limiter.consume(`${this.clientIp(req)}:${Math.floor(Date.now() / 1000)}`, 1);
      return undefined;
    } catch (e) {
      if (e instanceof RateLimiterRes) return Math.max(1, Math.ceil(e.msBeforeNext / 1000));
      return undefined;
    }
  }
}
