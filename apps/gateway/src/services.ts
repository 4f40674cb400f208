import { Ledger, SiweAuthenticator, TokenStore } from '@acg/accounts';
import { readBuilderHealth } from '@acg/bundles';
import { JobQueue, JobStore } from '@acg/jobs';
import { createInProcessFacilitator, createRemoteFacilitator, PaymentChainMonitor, Paywall, RefundQueue, startRefunds as startRefundsOf } from '@acg/payments';
import type { Worker } from 'bullmq';
import { connectRedis, RedisKeys } from '@acg/redis';
import { secretBoxFromKey, WalletMonitorService } from '@acg/wallet-monitor';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createPublicClient, type PublicClient } from 'viem';
import { BUILTIN_CAPABILITIES, type CapabilityDefinition, type CapabilityDeps } from '@acg/capabilities';
import { ExecutionStore, Telemetry } from '@acg/execution';
import { chainClients, type GatewayConfig } from '@acg/config';
import { Discovery } from './discovery.js';
import { ProbeStore } from './probes.js';

/** Everything request handlers use, built once per process (no module-level singletons). */
export interface Services {
  config: GatewayConfig;
  log: Logger;
  redis: Redis;
  /** BullMQ connection (maxRetriesPerRequest: null). */
  bullRedis: Redis;
  keys: RedisKeys;
  paywall: Paywall;
  refunds: RefundQueue;
  executions: ExecutionStore;
  telemetry: Telemetry;
  probes: ProbeStore;
  discovery: Discovery;
  capabilityDeps: CapabilityDeps;
  /** Every capability this gateway serves: the built-ins plus `CreateServicesOptions.capabilities`, in catalog order. */
  capabilities: readonly CapabilityDefinition[];
  paymentClient: PublicClient;
  /** Reachability of the payment chain, from every payment RPC outcome (PAYMENT_RPC_TIMEOUT_MS bounds each request). */
  paymentChain: PaymentChainMonitor;
  siwe: SiweAuthenticator;
  tokens: TokenStore;
  ledger: Ledger;
  jobs: { store: JobStore; queue: JobQueue };
  /** Wallet-monitor subscriptions, dead letters and health (the watchers and delivery worker run in `startWalletMonitor`). */
  walletMonitor: WalletMonitorService;
  /** Absolute base URL of this gateway (known once it listens). */
  publicBaseUrl(): string;
  setListenUrl(url: string): void;
  close(): Promise<void>;
}

/** What {@link createServices} adds to the configuration. */
export interface CreateServicesOptions {
  /** Capability definitions served besides `BUILTIN_CAPABILITIES` (a provider's, a test's); an id used twice throws at the first document build. */
  capabilities?: readonly CapabilityDefinition[];
}

/** Builds the services from the configuration; opens Redis connections (closed by `close()`). */
export function createServices(config: GatewayConfig, log: Logger, opts: CreateServicesOptions = {}): Services {
  const capabilities = [...BUILTIN_CAPABILITIES, ...(opts.capabilities ?? [])];
  const keys = new RedisKeys(config.keyPrefix);
  const redis = connectRedis({ url: config.redisUrl, name: 'gateway' });
  const bullRedis = connectRedis({ url: config.redisUrl, name: 'gateway-bull', forBullmq: true });
  let listenUrl = config.publicBaseUrl ?? `http://${config.host}:${config.port}`;
  const publicBaseUrl = () => (config.publicBaseUrl ?? listenUrl).replace(/\/$/, '');

  const paymentChain = new PaymentChainMonitor(config.payment.rpcUrl, config.payment.rpcTimeoutMs);
  const paymentClient = createPublicClient({ chain: config.payment.chain, transport: paymentChain.transport(), pollingInterval: 250 }) as PublicClient;
  const facilitator = config.payment.facilitatorUrl
    ? createRemoteFacilitator(config.payment.facilitatorUrl)
    : createInProcessFacilitator({
        rpcUrl: config.payment.rpcUrl,
        chain: config.payment.chain,
        signer: config.payment.facilitatorPrivateKey!,
        networks: [`eip155:${config.payment.chain.id}`],
        monitor: paymentChain,
      });
  const refunds = new RefundQueue(redis, keys, bullRedis);
  const paywall = new Paywall({
    redis,
    keys,
    facilitator,
    publicClient: paymentClient,
    refunds,
    chain: paymentChain,
    log: log.child({ module: 'paywall' }),
    terms: {
      network: `eip155:${config.payment.chain.id}`,
      asset: config.payment.asset,
      payTo: config.payment.payTo,
      assetName: 'USD Coin',
      assetVersion: '2',
    },
  });

  const clients = chainClients(config);

  const telemetry = new Telemetry(redis, keys);
  const probes = new ProbeStore(redis, keys);
  if (config.walletMonitor?.webhookPolicy === 'production' && !config.walletMonitor.webhookSecretKey) {
    log.warn('WEBHOOK_SECRET_KEY is not set: webhook signing secrets are stored unencrypted in Redis');
  }
  const walletMonitor = new WalletMonitorService({
    redis,
    bullRedis,
    keys,
    policy: config.walletMonitor?.webhookPolicy ?? 'production',
    retryScheduleMs: config.walletMonitor?.retryScheduleMs,
    secretBox: secretBoxFromKey(config.walletMonitor?.webhookSecretKey),
  });

  const discovery = new Discovery({
    baseUrl: publicBaseUrl,
    builderUrl: config.builderUrl,
    payment: { network: `eip155:${config.payment.chain.id}`, asset: config.payment.asset, payTo: config.payment.payTo },
    probes,
    telemetry,
    capabilities,
    builderHealth: () => readBuilderHealth(redis, keys),
    walletMonitorHealth: () => walletMonitor.health(),
    paymentChainReachable: () => paymentChain.reachable(),
  });
  // a payment chain going away (or coming back) shows on /status/health at once, not after the 10 s cache
  paymentChain.onChange(() => discovery.invalidate());

  const siwe = new SiweAuthenticator(
    redis,
    keys,
    () => {
      const u = new URL(publicBaseUrl());
      return { domain: u.host, uri: publicBaseUrl(), chainId: config.payment.chain.id };
    },
    paymentClient,
  );

  return {
    config,
    log,
    siwe,
    tokens: new TokenStore(redis, keys),
    ledger: new Ledger(redis, keys),
    jobs: { store: new JobStore(redis, keys), queue: new JobQueue(keys, bullRedis) },
    walletMonitor,
    redis,
    bullRedis,
    keys,
    paywall,
    refunds,
    executions: new ExecutionStore(redis, keys),
    telemetry,
    probes,
    discovery,
    capabilityDeps: { chainClient: (chain) => clients.get(chain), redis, keys },
    capabilities,
    paymentClient,
    paymentChain,
    publicBaseUrl,
    setListenUrl(url) {
      listenUrl = url;
      discovery.invalidate();
    },
    async close() {
      await refunds.close().catch(() => undefined);
      await this.jobs.queue.close().catch(() => undefined);
      await walletMonitor.close().catch(() => undefined);
      redis.disconnect();
      bullRedis.disconnect();
    },
  };
}

/**
 * Starts the refund worker (USDC transfers treasury → payer; `startRefunds` of @acg/payments) for
 * these services, or returns undefined when no TREASURY_PRIVATE_KEY is configured (refunds then
 * stay `pending`, queued).
 */
export function startRefunds(services: Services): Worker | undefined {
  const { config } = services;
  return startRefundsOf({
    redis: services.redis,
    keys: services.keys,
    connection: services.bullRedis,
    rpcUrl: config.payment.rpcUrl,
    chain: config.payment.chain,
    treasuryPrivateKey: config.payment.treasuryPrivateKey,
    asset: config.payment.asset,
    log: services.log,
  });
}
