import { createServices, type GatewayConfig, type Services } from '@acg/gateway';
import { startJobRunner, type JobRunnerOptions } from '@acg/jobs';
import { startLiquidationIndexer, type LiquidationIndexer, type LiquidationIndexerConfig } from '@acg/liquidations';
import { startRefundWorker } from '@acg/payments';
import type { Worker } from 'bullmq';
import { pino, type Logger } from 'pino';
import { privateKeyToAccount } from 'viem/accounts';
import { stepExecutor } from './stepExecutor.js';

/** A running worker process: its BullMQ workers and `close()` (waits for active jobs to pause). */
export interface RunningWorker {
  services: Services;
  workers: Worker[];
  /** the liquidation indexer, when configured */
  indexer?: LiquidationIndexer;
  close(): Promise<void>;
}

export interface StartWorkerOptions {
  log?: Logger;
  /** Job runner tuning (retries, backoff, lock duration, a beforeStep hook). */
  jobs?: Partial<Pick<JobRunnerOptions, 'stepAttempts' | 'backoffMs' | 'lockDurationMs' | 'concurrency' | 'beforeStep' | 'afterStep'>>;
  /** Run the refund worker here (default true when TREASURY_PRIVATE_KEY is set). */
  refunds?: boolean;
  /** Run a liquidation indexer (issue 6) for these protocol deployments; Redis and key prefix come from the config. */
  liquidations?: Omit<LiquidationIndexerConfig, 'redis' | 'keyPrefix' | 'log'>;
}

/**
 * Starts the BullMQ workers (DESIGN 1 `apps/worker`) against the shared Redis: the job runner
 * (issue 3) and the refund worker. Stateless: run as many as needed; BullMQ distributes work and
 * hands a crashed worker's jobs to a live one.
 */
export async function startWorker(config: GatewayConfig, opts: StartWorkerOptions = {}): Promise<RunningWorker> {
  const log = opts.log ?? pino({ level: config.logLevel, base: { service: 'worker' } });
  const services = createServices(config, log);
  await services.redis.ping();
  const workers: Worker[] = [];
  workers.push(
    startJobRunner({
      connection: services.bullRedis,
      keys: services.keys,
      store: services.jobs.store,
      executor: stepExecutor(services),
      refunds: services.refunds,
      log: log.child({ module: 'jobs' }),
      ...opts.jobs,
    }),
  );
  if ((opts.refunds ?? true) && config.payment.treasuryPrivateKey) {
    workers.push(
      startRefundWorker({
        redis: services.redis,
        keys: services.keys,
        connection: services.bullRedis,
        rpcUrl: config.payment.rpcUrl,
        chain: config.payment.chain,
        treasury: privateKeyToAccount(config.payment.treasuryPrivateKey),
        asset: config.payment.asset,
        log: log.child({ module: 'refunds' }),
      }),
    );
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  let indexer: LiquidationIndexer | undefined;
  if (opts.liquidations) {
    indexer = await startLiquidationIndexer({ ...opts.liquidations, redis: services.redis, keyPrefix: config.keyPrefix, log: log.child({ module: 'liquidations' }) });
  }
  return {
    services,
    workers,
    indexer,
    async close() {
      await indexer?.stop();
      await Promise.all(workers.map((w) => w.close()));
      await services.close();
    },
  };
}
