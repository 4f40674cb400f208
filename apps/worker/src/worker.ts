import { createCoreServices } from '@acg/core-services';
import type { CapabilityCatalog, CapabilityDefinition } from '@acg/capabilities';
import { chainClients, type GatewayConfig } from '@acg/config';
import { type ExecutionStore, succeededExecutionAnswer, type Telemetry } from '@acg/execution';
import { JobStore, startJobRunner, type JobRunnerOptions } from '@acg/jobs';
import { startLiquidationIndexer, type LiquidationIndexer, type LiquidationIndexerConfig } from '@acg/liquidations';
import {
  type ChainReconciliationOptions,
  DEFAULT_RECONCILE_CONFIRMATIONS,
  type PaymentRecoveryOptions,
  readChainReconciliationReport,
  type RunningChainReconciliation,
  startChainReconciliation,
  startPaymentRecovery,
} from '@acg/reconciliation';
import { type CreditReversal, type RefundQueue, type RunningFinality, startRefundsFromConfig, startTransferFinality, TreasurySender } from '@acg/treasury';
import { type Ledger, startOpenCallRecovery } from '@acg/accounts';
import { type ProviderLedger, startPayouts, type PayoutHooks, type RunningPayouts } from '@acg/provider-ledger';
import type { ProviderDirectory, ProviderEarnings, ProviderStore } from '@acg/provider-directory';
import { loadReceipts } from '@acg/receipts';
import type { RedisKeys } from '@acg/redis';
import { secretBoxFromKey } from '@acg/secrets';
import { startWalletMonitor, type RunningWalletMonitor, type WalletMonitorConfig } from '@acg/wallet-monitor';
import {
  ChainReconciliationMetrics,
  createLogger,
  createServiceMetrics,
  DeliveryMetrics,
  ExecutionMetrics,
  JobMetrics,
  PaymentMetrics,
  startMetricsServer,
  type MetricsServer,
  type Registry,
} from '@acg/observability';
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { privateKeyToAccount } from 'viem/accounts';
import type { PublicClient } from 'viem';
import type { ChannelSettlement, ChannelSettlementOptions } from '@acg/channels';
import { channelSettlementOf, channelUnpaidHandler } from './channels.js';
import { stepExecutor } from './stepExecutor.js';
import { recordJobSettlement } from './deferredSettlement.js';
import { liquidationsFromEnv } from './liquidationsConfig.js';
import { providerCreditRestorer } from './providerCredits.js';

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
  /** Providers' money (@acg/provider-ledger); dispute refunds go to `refunds`. The payout pass runs on it. */
  providerLedger: ProviderLedger;
  /** The payment chain (PAYMENT_RPC_URL), each request bounded by PAYMENT_RPC_TIMEOUT_MS: receipts for the crash-recovery sweep. */
  paymentClient: PublicClient;
  /** Every capability a job step may run: `BUILTIN_CAPABILITIES` plus `StartWorkerOptions.capabilities` (and providers', as they register). */
  catalog: CapabilityCatalog;
  /** Keeps `catalog` in step with the providers in Redis (started by `startWorker`), so job steps run provider capabilities too. */
  providers: ProviderDirectory;
  /** The registered providers (their payout addresses: the chain reconciliation restores credits with them). */
  providerStore: ProviderStore;
  /** What a refunded payment takes back (`paymentReversals` of @acg/provider-ledger over the provider ledger and metered accounts). */
  creditReversal: CreditReversal;
  /** Metered accounts (@acg/accounts). */
  accountLedger: Ledger;
  /** This worker's Prometheus registry and metric families (served on WORKER_METRICS_PORT when set). */
  metrics: WorkerMetrics;
  /** Closes the refund queue and both Redis connections. */
  close(): Promise<void>;
}

/**
 * A worker's Prometheus metrics, in a registry of this worker instance alone: job steps and jobs
 * ended, executions of job steps, webhook deliveries, refunds queued (a job's unspent budget) and
 * sent, and the chain reconciliation's report (read from Redis at scrape time). Queue depths and block lags are the gateway's (`/metrics` on the gateway port).
 */
export interface WorkerMetrics {
  registry: Registry;
  jobs: JobMetrics;
  executions: ExecutionMetrics;
  deliveries: DeliveryMetrics;
  payments: PaymentMetrics;
}

/** A new registry with the worker's metric families. */
export function createWorkerMetrics(): WorkerMetrics {
  return createServiceMetrics({ jobs: JobMetrics, executions: ExecutionMetrics, deliveries: DeliveryMetrics, payments: PaymentMetrics });
}

/**
 * Builds the {@link WorkerServices} from the configuration; opens two Redis connections (closed by
 * `close()`). Nothing here listens or starts a BullMQ worker.
 */
export function createWorkerServices(
  config: GatewayConfig,
  log: Logger,
  capabilities: readonly CapabilityDefinition[] = [],
  earnings?: ProviderEarnings,
): WorkerServices {
  const metrics = createWorkerMetrics();
  const core = createCoreServices(config, log, { name: 'worker', capabilities, earnings, observer: metrics.payments });
  const { redis, bullRedis, keys } = core;
  new ChainReconciliationMetrics(metrics.registry, () => readChainReconciliationReport(redis, keys));
  return {
    config,
    log,
    redis,
    bullRedis,
    keys,
    jobs: new JobStore(redis, keys),
    executions: core.executions,
    telemetry: core.telemetry,
    refunds: core.refunds,
    providerLedger: core.providerLedger,
    paymentClient: core.paymentClient,
    catalog: core.catalog,
    providers: core.providers.directory,
    providerStore: core.providers.store,
    creditReversal: core.creditReversal,
    accountLedger: core.accountLedger,
    metrics,
    close: () => core.close(),
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
  /** the provider payout schedule (`runNow()` runs one pass on demand), unless turned off */
  payouts?: RunningPayouts;
  /** the finality tracker of outgoing transfers (`tracker.check()` runs one round on demand), unless turned off */
  finality?: RunningFinality;
  /** the reconciliation of payments with the chain (`runNow()` runs once on demand), unless turned off */
  chainReconciliation?: RunningChainReconciliation;
  /** the pass over x402 `batch-settlement` channels (`pass()` runs one on demand), unless turned off */
  channels?: ChannelSettlement;
  /** The registry, and its `GET /metrics` listener when WORKER_METRICS_PORT (`config.metrics.workerPort`) is set. */
  metrics: { registry: Registry; server?: MetricsServer };
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
  /** Where provider shares of job steps are credited; default `WorkerServices.providerLedger` (a test may capture credits instead). */
  earnings?: ProviderEarnings;
  /** Job runner tuning (retries, backoff, lock duration, a beforeStep hook). */
  jobs?: Partial<
    Pick<
      JobRunnerOptions,
      'stepAttempts' | 'backoffMs' | 'lockDurationMs' | 'concurrency' | 'beforeStep' | 'afterStep' | 'deadlineMarginSeconds' | 'settleDeferred' | 'now'
    >
  >;
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
  /**
   * Run the provider payout pass (default true): every PROVIDER_PAYOUT_INTERVAL_SECONDS across all
   * workers, it auto-resolves old disputes, matures held shares and sends each available balance of
   * at least PROVIDER_PAYOUT_MIN_USDC from the treasury (only with TREASURY_PRIVATE_KEY; without it
   * no payout is sent). Options: how often to check whether a pass is due, and test hooks.
   */
  payouts?: boolean | { tickSeconds?: number; hooks?: PayoutHooks };
  /**
   * Watch settlements, refunds and payouts until final (PAYMENT_FINALITY) and send again what a
   * reorg removed (default true; @acg/payments `startTransferFinality`, one round per new block,
   * polled every `pollingIntervalMs`, default 2 000).
   */
  finality?: boolean | { pollingIntervalMs?: number };
  /**
   * Reconcile payments with the payment chain (default true; `@acg/payments` `startChainReconciliation`,
   * docs/operating.md "Reconciliation from the chain"): every PAYMENT_RECONCILE_INTERVAL_MS (default 60 s) across
   * all workers, the payments into the treasury up to PAYMENT_RECONCILE_CONFIRMATIONS (default
   * {@link reconcileConfirmations}: PAYMENT_FINALITY's depth when it is one, else 12) blocks below the head, from the cursor on (none: PAYMENT_RECONCILE_LOOKBACK_BLOCKS below, default 0).
   */
  chainReconciliation?: boolean | ChainReconciliationSettings;
  /**
   * Claim, settle and refund x402 `batch-settlement` channels (default true; packages/channels README
   * "Claims and settlement"): a pass every CHANNEL_CHECK_INTERVAL_SECONDS, one at a time across all
   * workers. Options replace the configured ones (tests).
   */
  channels?: boolean | Partial<ChannelSettlementOptions>;
}

/** The settings of the chain reconciliation a worker runs (see {@link chainReconciliationFromEnv}). */
export type ChainReconciliationSettings = Pick<ChainReconciliationOptions, 'confirmations' | 'lookbackBlocks' | 'retentionSeconds' | 'chunkBlocks'> & {
  intervalMs?: number;
};

/**
 * The crash-recovery sweep's timing from the environment: PAYMENT_RECOVERY_INTERVAL_MS (default
 * 60 000) and PAYMENT_RECOVERY_AFTER_MS (a reservation without progress for this long is treated
 * as orphaned; default 600 000). Both positive integers, milliseconds; unset → the defaults.
 * Throws on a malformed value.
 */
export function paymentRecoveryFromEnv(env: NodeJS.ProcessEnv): { intervalMs?: number; olderThanMs?: number } {
  const intervalMs = integerFromEnv(env, 'PAYMENT_RECOVERY_INTERVAL_MS', 1, 'milliseconds');
  const olderThanMs = integerFromEnv(env, 'PAYMENT_RECOVERY_AFTER_MS', 1, 'milliseconds');
  return { ...(intervalMs ? { intervalMs } : {}), ...(olderThanMs ? { olderThanMs } : {}) };
}

/**
 * The chain reconciliation's settings from the environment: PAYMENT_RECONCILE_INTERVAL_MS (positive,
 * default 60 000), PAYMENT_RECONCILE_CONFIRMATIONS (blocks, ≥ 0, default {@link reconcileConfirmations}) and
 * PAYMENT_RECONCILE_LOOKBACK_BLOCKS (≥ 0, default 0); unset → the defaults. Throws on a malformed value.
 */
export function chainReconciliationFromEnv(env: NodeJS.ProcessEnv): ChainReconciliationSettings {
  const intervalMs = integerFromEnv(env, 'PAYMENT_RECONCILE_INTERVAL_MS', 1, 'milliseconds');
  const confirmations = integerFromEnv(env, 'PAYMENT_RECONCILE_CONFIRMATIONS', 0, 'blocks');
  const lookbackBlocks = integerFromEnv(env, 'PAYMENT_RECONCILE_LOOKBACK_BLOCKS', 0, 'blocks');
  return {
    ...(intervalMs !== undefined ? { intervalMs } : {}),
    ...(confirmations !== undefined ? { confirmations } : {}),
    ...(lookbackBlocks !== undefined ? { lookbackBlocks } : {}),
  };
}

/** An integer variable of at least `min`, or undefined when unset or empty; throws an Error naming it otherwise. */
function integerFromEnv(env: NodeJS.ProcessEnv, name: string, min: 0 | 1, unit: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a ${min ? 'positive' : 'non-negative'} integer (${unit})`);
  return n;
}

/**
 * The worker options the environment sets, one function for every entry that starts a worker
 * (`node dist/worker.js` and the `npm start` launcher), so they cannot diverge:
 * `paymentRecovery` from PAYMENT_RECOVERY_INTERVAL_MS / PAYMENT_RECOVERY_AFTER_MS
 * ({@link paymentRecoveryFromEnv}) and `liquidations` from LIQUIDATION_DEPLOYMENTS,
 * LIQUIDATION_USD_FEEDS and LIQUIDATION_NATIVE_TOKEN (`liquidationsFromEnv`; undefined when unset).
 * Throws an Error naming the variable on a malformed value (docs/configuration.md).
 */
export function workerOptionsFromEnv(
  env: NodeJS.ProcessEnv,
  config: GatewayConfig,
): Pick<StartWorkerOptions, 'paymentRecovery' | 'liquidations' | 'chainReconciliation'> {
  const liquidations = liquidationsFromEnv(env, config);
  return { paymentRecovery: paymentRecoveryFromEnv(env), chainReconciliation: chainReconciliationFromEnv(env), ...(liquidations ? { liquidations } : {}) };
}

/**
 * What the crash-recovery sweep and the chain reconciliation of a worker share: its Redis, the
 * payment chain, the refund queue, the credit reversals (provider share, deposit) and the stored
 * answer of an execution that finished before its answer was stored.
 */
export function paymentRecoveryOptions(services: WorkerServices, log: Logger): PaymentRecoveryOptions {
  return {
    redis: services.redis,
    keys: services.keys,
    publicClient: services.paymentClient,
    refunds: services.refunds,
    // an orphaned payment's refund takes back its provider credit and its deposit credit
    reversals: services.creditReversal,
    // an execution that finished before its answer was stored is delivered, not refunded
    finishedAnswer: (op) => succeededExecutionAnswer(services.executions, op),
    log,
  };
}

/**
 * Blocks below the head the chain reconciliation waits for when PAYMENT_RECONCILE_CONFIRMATIONS is
 * unset: PAYMENT_FINALITY's depth when it is one (2 on the dev chain `npm start` embeds, where
 * blocks are mined only when a transaction arrives, so 12 would keep its payments unchecked for a
 * long time), else `DEFAULT_RECONCILE_CONFIRMATIONS` (12) (docs/operating.md "Reconciliation from the chain").
 */
export function reconcileConfirmations(finality: GatewayConfig['payment']['finality']): number {
  return 'depth' in finality ? finality.depth : DEFAULT_RECONCILE_CONFIRMATIONS;
}

/**
 * The chain reconciliation's options for a worker (`@acg/payments` `ChainReconciliationOptions`):
 * {@link paymentRecoveryOptions}, the payment chain's network, asset and treasury from the config,
 * provider credits of executions and job steps restored from their records,
 * the confirmations ({@link reconcileConfirmations} unless `settings` names them),
 * provider credits restored from execution records, and `sender` (the treasury sender, when
 * TREASURY_PRIVATE_KEY is set) to re-send a refund that is not on chain. Also the `reconcile` command's.
 */
export function chainReconciliationOptions(
  services: WorkerServices,
  log: Logger,
  settings: ChainReconciliationSettings = {},
  sender?: TreasurySender,
): ChainReconciliationOptions {
  const { config } = services;
  return {
    ...paymentRecoveryOptions(services, log),
    ...settings,
    confirmations: settings.confirmations ?? reconcileConfirmations(config.payment.finality),
    network: `eip155:${config.payment.chain.id}`,
    asset: config.payment.asset,
    treasury: config.payment.payTo,
    restoreCredit: providerCreditRestorer({
      redis: services.redis,
      keys: services.keys,
      executions: services.executions,
      jobs: services.jobs,
      ledger: services.providerLedger,
      store: services.providerStore,
      log,
    }),
    // an upto settlement's execution record must name it (docs/decisions.md "Reconciliation from the chain")
    executionPayment: async (operationId) => (await services.executions.get(operationId))?.payment ?? undefined,
    ...(sender ? { sender } : {}),
  };
}

/** The treasury sender of a worker (refund re-sends, payouts), or undefined without TREASURY_PRIVATE_KEY. */
export function treasurySenderOf(services: WorkerServices): TreasurySender | undefined {
  const { payment } = services.config;
  if (!payment.treasuryPrivateKey) return undefined;
  return new TreasurySender({
    redis: services.redis,
    keys: services.keys,
    rpcUrl: payment.rpcUrl,
    chain: payment.chain,
    treasury: privateKeyToAccount(payment.treasuryPrivateKey),
    asset: payment.asset,
  });
}

/**
 * Starts the BullMQ workers (docs/architecture.md "Shape" `apps/worker`) against the shared Redis: the job runner
 * and the refund worker, plus the payment-recovery sweep, the provider payout pass
 * (`@acg/provider-ledger` `startPayouts`: one pass per PROVIDER_PAYOUT_INTERVAL_SECONDS across all
 * workers, under a Redis lease), the wallet monitor and the liquidation indexer when configured.
 * Built from packages only ({@link createWorkerServices}); the gateway's HTTP services are never
 * started here. Stateless: run as many as needed; BullMQ distributes work and hands a crashed worker's jobs to a live one. With WORKER_METRICS_PORT set
 * (`config.metrics.workerPort`; 0 picks a free port) it also serves `GET /metrics` there
 * (METRICS_TOKEN applies); the worker has no other HTTP listener.
 */
export async function startWorker(config: GatewayConfig, opts: StartWorkerOptions = {}): Promise<RunningWorker> {
  const log = opts.log ?? createLogger({ service: 'worker', level: config.logLevel, pretty: config.logPretty });
  const services = createWorkerServices(config, log, opts.capabilities, opts.earnings);
  await services.redis.ping();
  // first, so that a taken port stops the start before any worker runs
  const { workerPort, workerHost, token } = config.metrics;
  const metricsServer =
    workerPort === undefined
      ? undefined
      : await startMetricsServer({
          registry: services.metrics.registry,
          port: workerPort,
          host: workerHost,
          token,
          log: log.child({ module: 'metrics' }),
        }).catch(async (e: unknown) => {
          await services.close();
          throw e;
        });
  await services.providers.start(services.redis.duplicate());
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
        catalog: services.catalog,
        proofs: config.receipts ? (await loadReceipts(config.receipts, `eip155:${config.payment.chain.id}`)).proofs : undefined,
        executionObserver: services.metrics.executions,
      }),
      refunds: services.refunds,
      reverseCredit: (executionId) => services.providerLedger.reverseCredit(executionId),
      // an `upto` job's spend is recorded for the gateway to settle (it holds the witness's facilitator)
      settleDeferred: (job) => recordJobSettlement(services.redis, services.keys, log, job),
      observer: services.metrics.jobs,
      log: log.child({ module: 'jobs' }),
      ...opts.jobs,
    }),
  );
  const refunds =
    (opts.refunds ?? true)
      ? startRefundsFromConfig({
          redis: services.redis,
          keys: services.keys,
          connection: services.bullRedis,
          payment: config.payment,
          log,
          observer: services.metrics.payments,
        })
      : undefined;
  if (refunds) workers.push(refunds);
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const stopRecovery =
    opts.paymentRecovery === false
      ? undefined
      : startPaymentRecovery({
          ...paymentRecoveryOptions(services, log.child({ module: 'payment-recovery' })),
          ...(typeof opts.paymentRecovery === 'object' ? opts.paymentRecovery : {}),
        });
  // bearer calls that never ended (debited, neither answered nor credited back) are credited back
  const stopCallRecovery =
    opts.paymentRecovery === false
      ? undefined
      : startOpenCallRecovery({
          ledger: services.accountLedger,
          redis: services.redis,
          keys: services.keys,
          log: log.child({ module: 'open-call-recovery' }),
          ...(typeof opts.paymentRecovery === 'object' ? opts.paymentRecovery : {}),
        });
  const sender = treasurySenderOf(services);
  const chainReconciliation =
    opts.chainReconciliation === false
      ? undefined
      : await startChainReconciliation({
          ...chainReconciliationOptions(
            services,
            log.child({ module: 'chain-reconciliation' }),
            typeof opts.chainReconciliation === 'object' ? opts.chainReconciliation : {},
            sender,
          ),
          connection: services.bullRedis,
        });
  let payouts: RunningPayouts | undefined;
  if (opts.payouts !== false) {
    if (!sender) log.warn('TREASURY_PRIVATE_KEY is not set: provider payouts are not sent (disputes and maturity still run)');
    payouts = startPayouts({
      ledger: services.providerLedger,
      redis: services.redis,
      keys: services.keys,
      sender,
      minimum: BigInt(config.providers.payoutMinBaseUnits),
      disputeAutoResolveSeconds: config.providers.disputeAutoResolveSeconds,
      intervalSeconds: config.providers.payoutIntervalSeconds,
      log: log.child({ module: 'payouts' }),
      ...(typeof opts.payouts === 'object' ? opts.payouts : {}),
    });
  }
  // settlements, refunds and payouts are watched until final; what a reorg removed is sent again
  const finality =
    opts.finality === false
      ? undefined
      : startTransferFinality({
          redis: services.redis,
          keys: services.keys,
          publicClient: services.paymentClient,
          sender,
          rule: config.payment.finality,
          // an unpaid settlement's provider share and deposit credit are taken back
          reversals: services.creditReversal,
          // a provider's entry names its payment's transaction: it follows a settlement a reorg moved
          onSettlementMoved: ({ operationId, txHash }) => services.providerLedger.repointPayment(operationId, txHash),
          // a channel deposit reorged out for good: the channel is marked unpaid and its charges reported
          onChannelUnpaid: channelUnpaidHandler(services, log.child({ module: 'channels' })),
          log: log.child({ module: 'finality' }),
          ...(typeof opts.finality === 'object' ? opts.finality : {}),
        });
  // x402 batch-settlement channels: claims, settlement, cooperative refunds
  let channels: ChannelSettlement | undefined;
  if (opts.channels !== false) {
    channels = channelSettlementOf(services, log.child({ module: 'channels' }), typeof opts.channels === 'object' ? opts.channels : {});
    channels.start(config.channels.checkIntervalSeconds);
  }
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
      deliveryObserver: services.metrics.deliveries,
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
    payouts,
    finality,
    chainReconciliation,
    channels,
    metrics: { registry: services.metrics.registry, server: metricsServer },
    async close() {
      await metricsServer?.close();
      stopRecovery?.();
      stopCallRecovery?.();
      await payouts?.stop();
      await finality?.stop();
      await chainReconciliation?.close();
      await channels?.stop();
      await indexer?.stop();
      await monitor?.stop();
      await Promise.all(workers.map((w) => w.close()));
      await services.close();
    },
  };
}
