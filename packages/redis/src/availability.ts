import type { Redis } from 'ioredis';

/**
 * The Redis outage tolerance, milliseconds (30 s): a Redis outage shorter than this loses no
 * work. Jobs resume where they stopped, a paid request that already settled waits up to this long
 * to store its answer (so a replay gets it as soon as Redis is back), and a reservation left by a
 * request that failed before settling is released once Redis answers again. Beyond it, the
 * crash-recovery sweep of payments and BullMQ's stalled-job check take over (minutes).
 */
export const REDIS_OUTAGE_TOLERANCE_MS = 30_000;

/** Error codes of a socket that cannot reach Redis (Node `err.code`). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/** ioredis and Redis messages meaning "not reachable now, retry later" (not a bad command). */
const MESSAGES = [
  /^Connection is closed/i,
  /max retries per request/i,
  /Stream isn't writeable/i,
  /^Command timed out/i,
  /^Redis unavailable\b/, // failFastWhileUnanswered: no PONG lately
  /^LOADING\b/, // a restarted Redis replaying its AOF or RDB
  /^TRYAGAIN\b/,
  /^CLUSTERDOWN\b/,
  /^MASTERDOWN\b/,
  /^READONLY\b/, // a failover in progress
  /Failed to refresh slots cache/i,
  /None of startup nodes is available/i,
];

/**
 * Whether `err` (or any error in its `cause` chain, or an AggregateError's `errors`) means Redis
 * was unreachable or not ready: ioredis `MaxRetriesPerRequestError`, "Connection is closed.",
 * "Command timed out", a refused or reset socket (`ECONNREFUSED`...), a server still `LOADING`
 * after a restart, a cluster failover. Such a failure is transient: the caller should answer 503
 * with `Retry-After` or retry once Redis is back, never treat it as a failed operation.
 */
export function isRedisUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 8) return false;
  const e = err as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (e.name === 'MaxRetriesPerRequestError') return true;
  if (typeof e.code === 'string' && SOCKET_CODES.has(e.code)) return true;
  if (typeof e.message === 'string' && MESSAGES.some((re) => re.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isRedisUnavailable(x, depth + 1))) return true;
  return e.cause !== undefined && e.cause !== err && isRedisUnavailable(e.cause, depth + 1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `fn`; while it fails with {@link isRedisUnavailable}, retries it (backoff 100 ms doubling
 * to 1 s) until `toleranceMs` (default {@link REDIS_OUTAGE_TOLERANCE_MS}) have passed since the
 * first failure, then rethrows the last error. Any other error is rethrown at once. `fn` must be
 * safe to repeat (an idempotent write or a compare-and-set script).
 */
export async function retryWhileRedisUnavailable<T>(fn: () => Promise<T>, opts: { toleranceMs?: number; onRetry?: (err: unknown) => void } = {}): Promise<T> {
  let since: number | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!isRedisUnavailable(e)) throw e;
      since ??= Date.now();
      if (Date.now() - since >= (opts.toleranceMs ?? REDIS_OUTAGE_TOLERANCE_MS)) throw e;
      opts.onRetry?.(e);
      await sleep(Math.min(100 * 2 ** attempt, 1_000));
    }
  }
}

/**
 * Resolves once `redis` answers PING; rejects with the last error when it does not within
 * `toleranceMs` (default {@link REDIS_OUTAGE_TOLERANCE_MS}).
 */
export async function waitForRedis(redis: Pick<Redis, 'ping'>, toleranceMs = REDIS_OUTAGE_TOLERANCE_MS): Promise<void> {
  await retryWhileRedisUnavailable(() => redis.ping(), { toleranceMs });
}
