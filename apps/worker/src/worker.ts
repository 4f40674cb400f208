import { createServices, startRefunds, type GatewayConfig, type Services } from '@acg/gateway';
import { startJobRunner, type JobRunnerOptions } from '@acg/jobs';
import { startLiquidationIndexer, type LiquidationIndexer, type LiquidationIndexerConfig } from '@acg/liquidations';
import { secretBoxFromKey, startWalletMonitor, type RunningWalletMonitor, type WalletMonitorConfig } from '@acg/wallet-monitor';
import type { Worker } from 'bullmq';
import { startPaymentRecovery } from '@acg/payments';
import { pino, type Logger } from 'pino';
import { stepExecutor } from './stepExecutor.js';

/** A running worker process: its BullMQ workers and `close()` (waits for active jobs to pause). */
export interface RunningWorker {
  services: Services;
  workers: Worker[];
  /** the liquidation indexer, when configured */
  indexer?: LiquidationIndexer;
  /** the wallet monitor's watchers and deliveries, when chains are configured */
  walletMonitor?: RunningWalletMonitor;
  close(): Promise<void>;
}

export interface StartWorkerOptions {
  log?: Logger;
  /** Job runner tuning (retries, backoff, lock duration, a beforeStep hook). */
  jobs?: Partial<Pick<JobRunnerOptions, 'stepAttempts' | 'backoffMs' | 'lockDurationMs' | 'concurrency' | 'beforeStep' | 'afterStep'>>;
  /** Run the refund worker here (default true when TREASURY_PRIVATE_KEY is set). */
  refunds?: boolean;
  /** Sweep paid requests orphaned by a crash (default true; every 60 s, after 10 minutes without progress). */
  paymentRecovery?: boolean | { intervalMs?: number; olderThanMs?: number };
  /** Run a liquidation indexer (issue 6) for these protocol deployments; Redis and key prefix come from the config. */
  liquidations?: Omit<LiquidationIndexerConfig, 'redis' | 'keyPrefix' | 'log'>;
  /**
   * Run the wallet monitor's chain watchers and webhook deliveries (issue 5) for the configured
   * chains (`config.chains`; default true); options override its defaults (confirmations, retry schedule...).
   */
  walletMonitor?: boolean | Partial<Omit<WalletMonitorConfig, 'redis' | 'bullRedis' | 'keyPrefix' | 'log'>>;
}

/**
 * The crash-recovery sweep's timing from the environment: PAYMENT_RECOVERY_INTERVAL_MS (default
 * 60 000) and PAYMENT_RECOVERY_AFTER_MS (a reservation without progress for this long is treated
 * as orphaned; default 600 000). Both positive integers, milliseconds; unset → the defaults.
 * Throws on a malformed value.
 */
export function paymentRecoveryFromEnv(env: NodeJS.ProcessEnv): { intervalMs?: number; olderThanMs?: number } {
  const ms = (name: string) => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer (milliseconds)`);
    return n;
  };
  const intervalMs = ms('PAYMENT_RECOVERY_INTERVAL_MS');
  const olderThanMs = ms('PAYMENT_RECOVERY_AFTER_MS');
  return { ...(intervalMs ? { intervalMs } : {}), ...(olderThanMs ? { olderThanMs } : {}) };
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
  const refunds = (opts.refunds ?? true) ? startRefunds(services) : undefined;
  if (refunds) workers.push(refunds);
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const stopRecovery =
    opts.paymentRecovery === false
      ? undefined
      : startPaymentRecovery({
          redis: services.redis,
          keys: services.keys,
          publicClient: services.paymentClient,
          refunds: services.refunds,
          log: log.child({ module: 'payment-recovery' }),
          ...(typeof opts.paymentRecovery === 'object' ? opts.paymentRecovery : {}),
        });
  let monitor: RunningWalletMonitor | undefined;
  if (opts.walletMonitor !== false && Object.keys(config.chains).length > 0) {
    const extra = typeof opts.walletMonitor === 'object' ? opts.walletMonitor : {};
    monitor = await startWalletMonitor({
      redis: services.redis,
      bullRedis: services.bullRedis,
      keyPrefix: config.keyPrefix,
      chains: Object.fromEntries(Object.entries(config.chains).map(([name, rpcUrl]) => [name, { rpcUrl: rpcUrl! }])),
      policy: config.walletMonitor?.webhookPolicy,
      retryScheduleMs: config.walletMonitor?.retryScheduleMs,
      secretBox: secretBoxFromKey(config.walletMonitor?.webhookSecretKey),
      log: log.child({ module: 'wallet-monitor' }),
      ...extra,
    });
  }
  let indexer: LiquidationIndexer | undefined;
  if (opts.liquidations) {
    indexer = await startLiquidationIndexer({ ...opts.liquidations, redis: services.redis, keyPrefix: config.keyPrefix, log: log.child({ module: 'liquidations' }) });
  }
  return {
    services,
    workers,
    indexer,
    walletMonitor: monitor,
    async close() {
      stopRecovery?.();
      await indexer?.stop();
      await monitor?.stop();
      await Promise.all(workers.map((w) => w.close()));
      await services.close();
    },
  };
}
