import { BUILTIN_CAPABILITIES, type CapabilityDefinition } from '@acg/capabilities';
import { chainClients, type GatewayConfig } from '@acg/config';
import { ExecutionStore, Telemetry } from '@acg/execution';
import { JobStore, startJobRunner, type JobRunnerOptions } from '@acg/jobs';
import { startLiquidationIndexer, type LiquidationIndexer, type LiquidationIndexerConfig } from '@acg/liquidations';
import { PaymentChainMonitor, RefundQueue, startPaymentRecovery, startRefunds } from '@acg/payments';
import { connectRedis, RedisKeys } from '@acg/redis';
import { secretBoxFromKey, startWalletMonitor, type RunningWalletMonitor, type WalletMonitorConfig } from '@acg/wallet-monitor';
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { createPublicClient, type PublicClient } from 'viem';
import { stepExecutor } from './stepExecutor.js';

/**
 * What a worker process builds from packages for itself (never the gateway's HTTP services): Redis
 * connections and keys, the stores its jobs write, the refund queue, the payment chain client and
 * the capability definitions job steps run.
 */
export interface WorkerServices {
  config: GatewayConfig;
  log: Logger;
  redis: Redis;
  /** BullMQ connection (maxRetriesPerRequest: null). */
  bullRedis: Redis;
  keys: RedisKeys;
  jobs: JobStore;
  executions: ExecutionStore;
  telemetry: Telemetry;
  refunds: RefundQueue;
  /** The payment chain (PAYMENT_RPC_URL), each request bounded by PAYMENT_RPC_TIMEOUT_MS: receipts for the crash-recovery sweep. */
  paymentClient: PublicClient;
  /** Every capability a job step may run: `BUILTIN_CAPABILITIES` plus `StartWorkerOptions.capabilities`. */
  capabilities: readonly CapabilityDefinition[];
  /** Closes the refund queue and both Redis connections. */
  close(): Promise<void>;
}

/**
 * Builds the {@link WorkerServices} from the configuration; opens two Redis connections (closed by
 * `close()`). Nothing here listens or starts a BullMQ worker.
 */
export function createWorkerServices(config: GatewayConfig, log: Logger, capabilities: readonly CapabilityDefinition[] = []): WorkerServices {
  const keys = new RedisKeys(config.keyPrefix);
  const redis = connectRedis({ url: config.redisUrl, name: 'worker' });
  const bullRedis = connectRedis({ url: config.redisUrl, name: 'worker-bull', forBullmq: true });
  const paymentChain = new PaymentChainMonitor(config.payment.rpcUrl, config.payment.rpcTimeoutMs);
  const refunds = new RefundQueue(redis, keys, bullRedis);
  return {
    config,
    log,
    redis,
    bullRedis,
    keys,
    jobs: new JobStore(redis, keys),
    executions: new ExecutionStore(redis, keys),
    telemetry: new Telemetry(redis, keys),
    refunds,
    paymentClient: createPublicClient({ chain: config.payment.chain, transport: paymentChain.transport(), pollingInterval: 250 }) as PublicClient,
    capabilities: [...BUILTIN_CAPABILITIES, ...capabilities],
    async close() {
      await refunds.close().catch(() => undefined);
      redis.disconnect();
      bullRedis.disconnect();
    },
  };
}

/** A running worker process: its BullMQ workers and `close()` (waits for active jobs to pause). */
export interface RunningWorker {
  services: WorkerServices;
  workers: Worker[];
  /** the liquidation indexer, when configured */
  indexer?: LiquidationIndexer;
  /** the wallet monitor's watchers and deliveries, when chains are configured */
  walletMonitor?: RunningWalletMonitor;
  close(): Promise<void>;
}

export interface StartWorkerOptions {
  log?: Logger;
  /**
   * Capability definitions job steps may run besides the built-ins (`defineCapability` of
   * @acg/capabilities): pass the same list as the gateway's `capabilities` option, so that a job
   * the gateway accepted for an added capability runs its steps here.
   */
  capabilities?: readonly CapabilityDefinition[];
  /** Job runner tuning (retries, backoff, lock duration, a beforeStep hook). */
  jobs?: Partial<Pick<JobRunnerOptions, 'stepAttempts' | 'backoffMs' | 'lockDurationMs' | 'concurrency' | 'beforeStep' | 'afterStep'>>;
  /** Run the refund worker here (default true when TREASURY_PRIVATE_KEY is set). */
  refunds?: boolean;
  /** Sweep paid requests orphaned by a crash (default true; every 60 s, after 10 minutes without progress). */
  paymentRecovery?: boolean | { intervalMs?: number; olderThanMs?: number };
  /** Run a liquidation indexer for these protocol deployments; Redis and key prefix come from the config. */
  liquidations?: Omit<LiquidationIndexerConfig, 'redis' | 'keyPrefix' | 'log'>;
  /**
   * Run the wallet monitor's chain watchers and webhook deliveries for the configured
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
 * and the refund worker, plus the payment-recovery sweep, the wallet monitor and the
 * liquidation indexer when configured. Built from packages only ({@link createWorkerServices}); the
 * gateway's HTTP services are never started here. Stateless: run as many as needed; BullMQ
 * distributes work and hands a crashed worker's jobs to a live one.
 */
export async function startWorker(config: GatewayConfig, opts: StartWorkerOptions = {}): Promise<RunningWorker> {
  const log = opts.log ?? pino({ level: config.logLevel, base: { service: 'worker' } });
  const services = createWorkerServices(config, log, opts.capabilities);
  await services.redis.ping();
  const clients = chainClients(config);
  const workers: Worker[] = [];
  workers.push(
    startJobRunner({
      connection: services.bullRedis,
      keys: services.keys,
      store: services.jobs,
      executor: stepExecutor({
        executions: services.executions,
        telemetry: services.telemetry,
        log,
        capabilityDeps: { chainClient: (chain) => clients.get(chain), redis: services.redis, keys: services.keys },
        capabilities: services.capabilities,
      }),
      refunds: services.refunds,
      log: log.child({ module: 'jobs' }),
      ...opts.jobs,
    }),
  );
  const refunds =
    (opts.refunds ?? true)
      ? startRefunds({
          redis: services.redis,
          keys: services.keys,
          connection: services.bullRedis,
          rpcUrl: config.payment.rpcUrl,
          chain: config.payment.chain,
          treasuryPrivateKey: config.payment.treasuryPrivateKey,
          asset: config.payment.asset,
          log,
        })
      : undefined;
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
    if (config.walletMonitor?.webhookPolicy === 'production' && !config.walletMonitor.webhookSecretKey) {
      log.warn('WEBHOOK_SECRET_KEY is not set: webhook signing secrets are stored unencrypted in Redis');
    }
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
    indexer = await startLiquidationIndexer({
      ...opts.liquidations,
      redis: services.redis,
      keyPrefix: config.keyPrefix,
      log: log.child({ module: 'liquidations' }),
    });
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
