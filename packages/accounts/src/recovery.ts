import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Ledger } from './ledger.js';

/** What {@link startOpenCallRecovery} needs. */
export interface OpenCallRecoveryOptions {
  ledger: Pick<Ledger, 'recoverOpenCalls'>;
  redis: Redis;
  keys: RedisKeys;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** how often a round runs, ms (default 60 000) */
  intervalMs?: number;
  /** a bearer call open for this long never ended: credited back (default 10 minutes, as paid requests) */
  olderThanMs?: number;
}

/**
 * Runs {@link Ledger.recoverOpenCalls} every `intervalMs` under a Redis lock (one worker of a
 * deployment at a time): bearer calls whose process stopped between the debit and the outcome are
 * credited back. Returns a stop function.
 */
export function startOpenCallRecovery(o: OpenCallRecoveryOptions): () => void {
  const every = o.intervalMs ?? 60_000;
  const timer = setInterval(async () => {
    const lock = await o.redis.set(`${o.keys.prefix}acct:recovery-lock`, '1', 'PX', Math.floor(every * 0.9), 'NX').catch(() => null);
    if (!lock) return;
    try {
      const credited = await o.ledger.recoverOpenCalls(o.olderThanMs ?? 600_000);
      if (credited.length) o.log.warn({ refs: credited.slice(0, 20), count: credited.length }, 'credited back bearer calls that never ended');
    } catch (e) {
      o.log.error({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'open-call recovery round failed');
    }
  }, every);
  timer.unref();
  return () => clearInterval(timer);
}
