import { createCoreServices } from '@acg/core-services';
import type { Ledger } from '@acg/accounts';
import { SignInWithX, SignInWithXChallenges, SiweAuthenticator, TokenStore } from '@acg/identity';
import { readBuilderHealth } from '@acg/bundles';
import { JobQueue, JobStore } from '@acg/jobs';
import { batchSettlementScheme, createInProcessFacilitator, createRemoteFacilitator, type PaymentChainMonitor, Paywall, uptoScheme } from '@acg/payments';
import { createChannelStorage } from '@acg/channels';
import { type CreditReversal, type RefundQueue, startRefundsFromConfig } from '@acg/treasury';
import type { Worker } from 'bullmq';
import type { ProviderLedger } from '@acg/provider-ledger';
import { connectRedis, LatencySeries, type RedisKeys, ReplicaAcks } from '@acg/redis';
import { secretBoxFromKey } from '@acg/secrets';
import { WalletMonitorService } from '@acg/wallet-monitor';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CapabilityOffer, DisputeView, PayoutView, ProviderBalance } from '@acg/schemas';
import type { PublicClient } from 'viem';
import type { CapabilityCatalog, CapabilityDefinition, CapabilityDeps } from '@acg/capabilities';
import type { ExecutionStore, Telemetry, ExecutionObserver } from '@acg/execution';
import { PROOF_SCHEME, type Receipts } from '@acg/receipts';
import {
  ChallengeStore,
  ProviderOnboarding,
  QuoteStore,
  type OfferScorer,
  type OfferStats,
  type ProviderClient,
  type ProviderDirectory,
  type ProviderEarnings,
  type ProviderStore,
  type TrustRecords,
} from '@acg/provider-directory';
import { chainClients, type GatewayConfig } from '@acg/config';
import { Discovery } from './discovery.js';
import { createGatewayMetrics, watchSharedState, type GatewayMetrics } from './metrics.js';
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
  /** Every capability this gateway serves now: the built-ins plus `CreateServicesOptions.capabilities` plus providers', in catalog order. */
  catalog: CapabilityCatalog;
  paymentClient: PublicClient;
  /** Reachability of the payment chain, from every payment RPC outcome (PAYMENT_RPC_TIMEOUT_MS bounds each request). */
  paymentChain: PaymentChainMonitor;
  siwe: SiweAuthenticator;
  /** x402 `sign-in-with-x` proofs (a 402's signed challenge): the other way to a bearer session (`trpc/signInWithX.ts`). */
  signInWithX: SignInWithX;
  tokens: TokenStore;
  ledger: Ledger;
  jobs: { store: JobStore; queue: JobQueue };
  /** Wallet-monitor subscriptions, dead letters and health (the watchers and delivery worker run in `startWalletMonitor`). */
  walletMonitor: WalletMonitorService;
  /** This gateway's Prometheus registry and metric families (`GET /metrics`). */
  metrics: GatewayMetrics;
  /** Told of each execution the Executor records (`metrics.executions`). */
  executionObserver: ExecutionObserver;
  /**
   * Providers' money (@acg/provider-ledger): shares held, available and paid, fees, disputes. Its
   * dispute refunds go to `refunds`; payouts are sent by the worker's payout pass.
   */
  providerLedger: ProviderLedger;
  /**
   * What a refund takes back of its operation's credit (a provider's share, a deposit), in the same
   * decision: the paywall's and the crash-recovery sweep's (`paymentReversals` of @acg/provider-ledger).
   */
  creditReversal: CreditReversal;
  /**
   * Third-party providers (docs/decisions.md "Providers"): records, onboarding (EIP-191 challenges), the
   * signed HTTP client and the directory that keeps `catalog` in step with Redis (started by
   * `startGateway`).
   */
  providers: {
    store: ProviderStore;
    onboarding: ProviderOnboarding;
    client: ProviderClient;
    directory: ProviderDirectory;
    /** Per-offer measurements: calls, failures, latencies, probe state (docs/marketplace.md). */
    stats: OfferStats;
    /** Probes one provider's capabilities now (set by `startGateway` once its prober exists). */
    probe?: (providerId: string) => Promise<unknown>;
    /** Trust-score records of every offer (executions, probes, suspensions; docs/trust-v1.md). */
    trust: TrustRecords;
    /** Quotes of `POST /api/v1/quotes` (README "Quotes"); a test may swap in one on its own clock. */
    quotes: QuoteStore;
  };
  /**
   * Receipt keys (docs/decisions.md "Proofs and receipts"), loaded by `startGateway` when configured:
   * `proofs` signs every SUCCEEDED execution (the Executor reads it), `jwks` is served at
   * `/.well-known/jwks.json`.
   */
  receipts?: Receipts;
  /** The same proof signer, where the Executor looks for it. */
  proofs?: Receipts['proofs'];
  /** The provider ledger's read side (balances, payouts, disputes): `providerLedger`; `GET /api/v1/providers/{id}` shows zeros without it. */
  providerMoney?: ProviderMoney;
  /** Absolute base URL of this gateway (known once it listens). */
  publicBaseUrl(): string;
  setListenUrl(url: string): void;
  close(): Promise<void>;
}

/** What `GET /api/v1/providers/{id}` reads of the provider ledger (integer strings, USDC base units). */
export interface ProviderMoney {
  balance(providerId: string): Promise<ProviderBalance>;
  payouts(providerId: string): Promise<PayoutView[]>;
  disputesOfProvider(providerId: string): Promise<DisputeView[]>;
}

/** What {@link createServices} adds to the configuration. */
export interface CreateServicesOptions {
  /** Capability definitions served besides `BUILTIN_CAPABILITIES` (a provider's, a test's); an id used twice throws at the first document build. */
  capabilities?: readonly CapabilityDefinition[];
  /** Where provider shares are credited; default `Services.providerLedger` (a test may capture credits instead). */
  earnings?: ProviderEarnings;
  /** Trust scores of provider offers for `prefer: "trusted"` (docs/marketplace.md "Trust scores"); default the offers' trust-v2 scores (`trustScorer`). */
  offerScorer?: OfferScorer;
}

/** Builds the services from the configuration; opens Redis connections (closed by `close()`). */
export function createServices(config: GatewayConfig, log: Logger, opts: CreateServicesOptions = {}): Services {
  const metrics = createGatewayMetrics();
  const core = createCoreServices(config, log, {
    name: 'gateway',
    capabilities: opts.capabilities,
    earnings: opts.earnings,
    offerScorer: opts.offerScorer,
    observer: metrics.payments,
  });
  const { catalog, fixedCapabilityIds: fixedIds, keys, redis, bullRedis, paymentChain, paymentClient, refunds, providerLedger, telemetry } = core;
  const { accountLedger, creditReversal, providers: providerParts } = core;
  let listenUrl = config.publicBaseUrl ?? `http://${config.host}:${config.port}`;
  const publicBaseUrl = () => (config.publicBaseUrl ?? listenUrl).replace(/\/$/, '');

  // x402 sign-in-with-x proofs: only challenges the paywall issued (recorded here) sign in
  const signInWithX = new SignInWithX(redis, keys, () => ({ origin: publicBaseUrl(), network: `eip155:${config.payment.chain.id}` }), paymentClient);
  const facilitator = config.payment.facilitatorUrl
    ? createRemoteFacilitator(config.payment.facilitatorUrl)
    : createInProcessFacilitator({
        rpcUrl: config.payment.rpcUrl,
        chain: config.payment.chain,
        signer: config.payment.facilitatorPrivateKey!,
        networks: [`eip155:${config.payment.chain.id}`],
        monitor: paymentChain,
        // the x402 `upfront` flow (below): settle verifies and simulates, no separate verify call
        simulateInSettle: true,
      });
  const webhookPolicy = config.walletMonitor?.webhookPolicy ?? 'production';
  // REDIS_WAIT_REPLICAS: WAIT after a paid call's money writes, on a connection of its own (docs/durability.md "Replicas")
  const waitRedis =
    config.store.waitReplicas > 0 ? connectRedis({ url: config.redisUrl, clusterNodes: config.redisClusterNodes, name: 'gateway-wait' }) : undefined;
  const paywall = new Paywall({
    redis,
    keys,
    facilitator,
    publicClient: paymentClient,
    refunds,
    // a refunded payment takes back what its operation credited, in the same decision (README "x402 payments")
    reversals: creditReversal,
    chain: paymentChain,
    log: log.child({ module: 'paywall' }),
    observer: metrics.payments,
    // x402 `upto` beside `exact` for calls whose cost is known only afterwards (docs/decisions.md
    // "Payment schemes"); PAYMENT_SCHEMES: `batch-settlement` too, its channels in Redis shared with
    // every gateway and the worker (@acg/channels; docs/decisions.md "batch-settlement")
    schemes: [
      uptoScheme,
      ...(config.payment.schemes.includes('batch-settlement') ? [batchSettlementScheme({ storage: createChannelStorage({ redis, keys }) })] : []),
    ],
    // every 402 carries a fresh x402 sign-in-with-x challenge (apps/gateway README "Sign-in-with-x")
    // (its nonce's write is not awaited: a lost one fails closed, packages/identity README "Sign-in-with-x")
    signInWithX: new SignInWithXChallenges(publicBaseUrl, (nonce, uri) =>
      signInWithX.issue(nonce, uri).catch((e: unknown) => {
        log.warn({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'sign-in-with-x nonce not recorded; its proof will be refused');
      }),
    ),
    ...(waitRedis
      ? { replicaAcks: new ReplicaAcks(waitRedis, `${keys.prefix}durability:barrier`, config.store.waitReplicas, config.store.waitTimeoutMs) }
      : {}),
    terms: {
      network: `eip155:${config.payment.chain.id}`,
      asset: config.payment.asset,
      payTo: config.payment.payTo,
      assetName: 'USD Coin',
      assetVersion: '2',
      // x402 `upfront` with the in-process facilitator (one facilitator call per payment: settle,
      // which verifies and simulates); `authorization` (verify, then settle) with a remote one,
      // whose settle may not simulate. The operation runs after settlement in both. docs/decisions.md "x402 payments".
      paymentFlow: config.payment.facilitatorUrl ? 'authorization' : 'upfront',
    },
  });

  const clients = chainClients(config);

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

  const { store: providerStore, client: providerClient } = providerParts;
  const providers = {
    store: providerStore,
    client: providerClient,
    trust: providerParts.trust,
    quotes: new QuoteStore(redis, keys),
    stats: providerParts.stats,
    onboarding: new ProviderOnboarding({
      store: providerStore,
      challenges: new ChallengeStore(redis, keys),
      client: providerClient,
      policy: webhookPolicy,
      reservedId: (id) => fixedIds.has(id),
    }),
    directory: providerParts.directory,
  };

  const discovery = new Discovery({
    baseUrl: publicBaseUrl,
    builderUrl: config.builderUrl,
    payment: { network: `eip155:${config.payment.chain.id}`, asset: config.payment.asset, payTo: config.payment.payTo },
    probes,
    telemetry,
    catalog,
    proofs: () => (services.receipts ? { scheme: PROOF_SCHEME, jwksUrl: `${publicBaseUrl()}/.well-known/jwks.json` } : undefined),
    builderHealth: () => readBuilderHealth(redis, keys),
    walletMonitorHealth: () => walletMonitor.health(),
    providerCounts: (id) => providerStore.counts(id),
    offers: async () => {
      const entries = await Promise.all(providers.directory.contracts().map(async (c) => [c.id, await providers.directory.offers(c.id)] as const));
      return Object.fromEntries(entries.filter((e): e is readonly [string, CapabilityOffer[]] => e[1] !== undefined));
    },
    latencySeries: new LatencySeries(redis, keys),
    paymentChainReachable: () => paymentChain.reachable(),
  });
  const jobQueue = new JobQueue(keys, bullRedis);
  watchSharedState(metrics, {
    redis,
    keys,
    queues: { jobs: jobQueue, refunds, webhook_deliveries: walletMonitor.deliveries.queue },
    chainClient: (chain) => clients.get(chain),
  });

  // a payment chain going away (or coming back) shows on /status/health at once, not after the 10 s cache
  paymentChain.onChange(() => discovery.invalidate());
  // a provider registered, changed or retired is listed at once
  catalog.onChange(() => discovery.catalogChanged());

  const siwe = new SiweAuthenticator(
    redis,
    keys,
    () => {
      const u = new URL(publicBaseUrl());
      return { domain: u.host, uri: publicBaseUrl(), chainId: config.payment.chain.id };
    },
    paymentClient,
  );

  const services: Services = {
    config,
    log,
    siwe,
    signInWithX,
    tokens: new TokenStore(redis, keys),
    ledger: accountLedger,
    jobs: { store: new JobStore(redis, keys), queue: jobQueue },
    walletMonitor,
    providerLedger,
    creditReversal,
    providerMoney: providerLedger,
    metrics,
    executionObserver: metrics.executions,
    providers,
    redis,
    bullRedis,
    keys,
    paywall,
    refunds,
    executions: core.executions,
    telemetry,
    probes,
    discovery,
    capabilityDeps: { chainClient: (chain) => clients.get(chain), redis, keys },
    catalog,
    paymentClient,
    paymentChain,
    publicBaseUrl,
    setListenUrl(url) {
      listenUrl = url;
      discovery.invalidate();
    },
    async close() {
      await this.jobs.queue.close().catch(() => undefined);
      await walletMonitor.close().catch(() => undefined);
      await core.close();
      waitRedis?.disconnect();
    },
  };
  return services;
}

/**
 * Starts the refund worker (USDC transfers treasury → payer; `startRefundsFromConfig` of @acg/payments) for
 * these services, or returns undefined when no TREASURY_PRIVATE_KEY is configured (refunds then
 * stay `pending`, queued).
 */
export function startRefunds(services: Services): Worker | undefined {
  const { config } = services;
  return startRefundsFromConfig({
    redis: services.redis,
    keys: services.keys,
    connection: services.bullRedis,
    payment: config.payment,
    log: services.log,
    observer: services.metrics.payments,
  });
}
