import type { StoreConfig } from '@acg/config';
import { readStoreDurability, type StoreDurability } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * What the gateway decided about its store at start (docs/durability.md):
 * - `durable`: `appendonly yes` with `appendfsync always` (on every master);
 * - `dev_defaults`: not durable or not readable, taken anyway because `npm start` runs on its
 *   embedded dev chain (the Redis may be a shared one that is not ours to configure);
 * - `overridden`: not durable or not readable, taken anyway because ALLOW_NON_DURABLE_STORE=true.
 */
export type StoreDecision = 'durable' | 'dev_defaults' | 'overridden';

/** The setting read at start and what the gateway made of it; the launcher's `redis` banner line shows it. */
export interface StoreDurabilityCheck extends StoreDurability {
  decision: StoreDecision;
}

/**
 * The gateway refuses to start: its store can lose acknowledged writes (or its setting cannot be
 * read) outside the dev defaults, and ALLOW_NON_DURABLE_STORE is not set. The message names the
 * setting, what it risks, the fix and the override; entries print it as
 * `gateway failed to start: ...` and exit 1.
 */
export class StoreNotDurableError extends Error {
  override name = 'StoreNotDurableError';
  constructor(readonly durability: StoreDurability) {
    const what =
      durability.verdict === 'unknown'
        ? `the store's durability cannot be checked (${durability.setting})`
        : `the store can lose acknowledged writes (${durability.setting})`;
    super(
      `refusing to take payments: ${what}. ${durability.risk} Run Redis with appendonly yes and appendfsync always ` +
        '(docs/durability.md), or set ALLOW_NON_DURABLE_STORE=true to take payments anyway.',
    );
  }
}

/**
 * Reads the store's durability once at start (`CONFIG GET append*`; never `CONFIG SET`) and
 * decides: durable goes on (one `info` line); otherwise the dev defaults and ALLOW_NON_DURABLE_STORE
 * go on with a `warn` line saying what the setting risks, and anything else throws.
 *
 * @throws {StoreNotDurableError} Outside the dev defaults, on a `lossy` or `unknown` store without the override.
 * @throws The connection's error when Redis does not answer.
 */
export async function checkStoreDurability(redis: Redis, store: StoreConfig, log: Logger): Promise<StoreDurabilityCheck> {
  const durability = await readStoreDurability(redis);
  const fields = { verdict: durability.verdict, setting: durability.setting };
  if (durability.verdict === 'durable') {
    log.info(fields, 'store durable: every acknowledged write is on disk before it is answered');
    return { ...durability, decision: 'durable' };
  }
  if (store.devDefaults) {
    log.warn({ ...fields, risk: durability.risk }, 'store not durable (dev defaults; production refuses this setting, docs/durability.md)');
    return { ...durability, decision: 'dev_defaults' };
  }
  if (store.allowNonDurable) {
    log.warn({ ...fields, risk: durability.risk }, 'store not durable; taking payments anyway because ALLOW_NON_DURABLE_STORE=true');
    return { ...durability, decision: 'overridden' };
  }
  throw new StoreNotDurableError(durability);
}
