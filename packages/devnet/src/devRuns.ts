import { connectRedisTarget, deleteKeysWithPrefix } from './redis.js';

/**
 * The set of per-run key prefixes (`acg:dev:<ULID>:`) that `npm start` launchers registered on a
 * shared Redis. A launcher removes its own prefix from it when it stops in order; one killed with
 * `kill -9` leaves it there, and the next launcher removes that run's keys ({@link removeDeadDevRuns}).
 */
export const DEV_RUNS_KEY = 'acg:dev:runs';

/** How long a run's liveness key lives without being renewed, ms (renewed every {@link DEV_RUN_RENEW_MS}). */
export const DEV_RUN_ALIVE_TTL_MS = 120_000;
/** How often a live launcher renews its liveness key, ms. */
export const DEV_RUN_RENEW_MS = 10_000;

/** The liveness key of the run with key prefix `prefix` (under the prefix, so the run's own cleanup removes it too). */
export const devRunAliveKey = (prefix: string): string => `${prefix}launcher:alive`;

type Target = { clusterNodes?: readonly string[] };

/**
 * Deletes the keys of every registered run whose launcher is gone (its liveness key expired: it
 * was killed without stopping, e.g. `kill -9`), with {@link deleteKeysWithPrefix} (SCAN of that
 * exact prefix, never a FLUSH), and unregisters it. Runs whose launcher still renews its key are
 * left alone.
 *
 * @returns Each removed run's prefix and how many keys it had.
 */
export async function removeDeadDevRuns(url: string, opts: Target = {}): Promise<{ prefix: string; removed: number }[]> {
  const redis = await connectRedisTarget(url, opts);
  try {
    const removed: { prefix: string; removed: number }[] = [];
    for (const prefix of await redis.smembers(DEV_RUNS_KEY)) {
      if (!/^\{?acg:dev:[0-9A-Z]{26}\}?:$/.test(prefix)) continue; // only what a launcher registers
      if ((await redis.exists(devRunAliveKey(prefix))) === 1) continue;
      removed.push({ prefix, removed: await deleteKeysWithPrefix(url, prefix, opts) });
      await redis.srem(DEV_RUNS_KEY, prefix);
    }
    return removed;
  } finally {
    redis.disconnect();
  }
}

/**
 * Registers the run with key prefix `prefix` in {@link DEV_RUNS_KEY} and keeps its liveness key
 * alive ({@link DEV_RUN_ALIVE_TTL_MS}, renewed every {@link DEV_RUN_RENEW_MS}) until `stop()`,
 * which unregisters it (the caller then deletes the run's keys itself).
 */
export async function registerDevRun(url: string, prefix: string, opts: Target = {}): Promise<{ stop(): Promise<void> }> {
  const redis = await connectRedisTarget(url, opts);
  const renew = () => redis.set(devRunAliveKey(prefix), String(process.pid), 'PX', DEV_RUN_ALIVE_TTL_MS);
  await renew();
  await redis.sadd(DEV_RUNS_KEY, prefix);
  const timer = setInterval(() => void renew().catch(() => undefined), DEV_RUN_RENEW_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await redis.srem(DEV_RUNS_KEY, prefix).catch(() => undefined);
      redis.disconnect();
    },
  };
}
