import { randomUUID } from 'node:crypto';
import { releaseLease, takeLease } from '@acg/redis';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { runChainReconciliation } from './chainReconciliation.js';
import type { ChainReconciliationOptions, ChainReconciliationRun } from './chainReconciliationOptions.js';
import { reconciliationKeys } from './commands/keys.js';

export const CHAIN_RECONCILIATION_QUEUE = 'chain-reconciliation';

/** Default time between scheduled reconciliation runs, ms. */
export const DEFAULT_RECONCILE_INTERVAL_MS = 60_000;

/** A running schedule: `runNow()` runs once here (under the same lease), `close()` stops this process's part. */
export interface RunningChainReconciliation {
  runNow(): Promise<ChainReconciliationRun | undefined>;
  close(): Promise<void>;
}

/**
 * Runs {@link runChainReconciliation} every `intervalMs` (default 60 s) as a BullMQ repeatable job
 * (job scheduler `chain-reconciliation`, the same for every worker: one job per interval across
 * the deployment). A run holds a Redis lease for `2 × intervalMs` so two runs never overlap; a run
 * that finds the lease taken does nothing. A failed run is logged and the next one resumes from the cursor.
 */
export async function startChainReconciliation(
  o: ChainReconciliationOptions & { connection: Redis; intervalMs?: number },
): Promise<RunningChainReconciliation> {
  const every = o.intervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
  const prefix = o.keys.bullPrefix();
  const leaseKey = reconciliationKeys.chainReconciliationLease(o.keys);
  const runNow = async (): Promise<ChainReconciliationRun | undefined> => {
    const holder = randomUUID();
    if (!(await takeLease(o.redis, { leaseKey, holder, leaseMs: 2 * every }))) return undefined;
    try {
      const report = await runChainReconciliation(o);
      if (report.repaired || report.undecided) o.log.warn(report, 'chain reconciliation run');
      else o.log.debug(report, 'chain reconciliation run');
      return report;
    } finally {
      await releaseLease(o.redis, { leaseKey, holder }).catch(() => undefined);
    }
  };
  const queue = new Queue(CHAIN_RECONCILIATION_QUEUE, { connection: o.connection, prefix });
  queue.on('error', () => undefined);
  await queue.upsertJobScheduler('chain-reconciliation', { every }, { name: 'reconcile', opts: { removeOnComplete: 10, removeOnFail: 10 } });
  const worker = new Worker(CHAIN_RECONCILIATION_QUEUE, () => runNow(), { connection: o.connection, prefix, concurrency: 1 });
  worker.on('failed', (_job, err) => o.log.error({ err: err.message.slice(0, 200) }, 'chain reconciliation run failed; the next resumes from the cursor'));
  worker.on('error', (err) =>
    o.log.warn({ err: String(err?.message ?? err).slice(0, 200) }, 'chain reconciliation worker error (e.g. Redis unavailable); it reconnects'),
  );
  await worker.waitUntilReady();
  return {
    runNow,
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
