import { Ledger } from '@acg/accounts';
import { BUILTIN_CAPABILITIES, CapabilityCatalog, type CapabilityDefinition } from '@acg/capabilities';
import type { GatewayConfig } from '@acg/config';
import { ExecutionStore, Telemetry } from '@acg/execution';
import { PaymentChainMonitor, type PaymentObserver } from '@acg/payments';
import { createProcessProviders, type OfferScorer, type ProcessProviders, type ProviderEarnings } from '@acg/provider-directory';
import { createRefundsAndLedger, paymentReversals, type ProviderLedger } from '@acg/provider-ledger';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { CreditReversal, RefundQueue } from '@acg/treasury';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createPublicClient, type PublicClient } from 'viem';

/** What {@link createCoreServices} needs besides the configuration and the log. */
export interface CoreServicesOptions {
  /** The process's name (`gateway`, `worker`): its Redis connections are `<name>` and `<name>-bull`. */
  name: string;
  /** Capability definitions served or run besides `BUILTIN_CAPABILITIES` (a provider's, a test's). */
  capabilities?: readonly CapabilityDefinition[];
  /** Where provider shares are credited; default the provider ledger (a test may capture credits instead). */
  earnings?: ProviderEarnings;
  /** Trust scores of provider offers (`prefer: "trusted"`); default the offers' trust-v2 scores. */
  offerScorer?: OfferScorer;
  /** Told of refunds queued and sent (the process's `PaymentMetrics`). */
  observer?: PaymentObserver;
}

/**
 * The service graph the gateway and the worker share (packages/core-services README): Redis
 * connections and keys, the payment chain, the capability catalog and the providers that keep it in
 * step, the refund queue and the provider ledger, executions, telemetry and metered accounts, and
 * the credit reversal a refunded payment applies.
 */
export interface CoreServices {
  config: GatewayConfig;
  log: Logger;
  keys: RedisKeys;
  redis: Redis;
  /** BullMQ connection (maxRetriesPerRequest: null). */
  bullRedis: Redis;
  /** Reachability of the payment chain, from every payment RPC outcome (PAYMENT_RPC_TIMEOUT_MS bounds each request). */
  paymentChain: PaymentChainMonitor;
  /** The payment chain's client, through `paymentChain`'s transport. */
  paymentClient: PublicClient;
  /** `BUILTIN_CAPABILITIES` plus `CoreServicesOptions.capabilities` (and providers', once `providers.directory` starts). */
  catalog: CapabilityCatalog;
  /** Ids of the definitions the catalog was built with (never a provider's). */
  fixedCapabilityIds: ReadonlySet<string>;
  providers: ProcessProviders;
  refunds: RefundQueue;
  providerLedger: ProviderLedger;
  executions: ExecutionStore;
  telemetry: Telemetry;
  /** Metered accounts (@acg/accounts). */
  accountLedger: Ledger;
  /** What a refunded payment takes back: the provider's ledger entry (`exe_`), the deposit's account credit (`dep_`). */
  creditReversal: CreditReversal;
  /** Closes the providers, the refund queue and both Redis connections. */
  close(): Promise<void>;
}

/** Builds the {@link CoreServices}; opens two Redis connections (closed by `close()`), starts nothing. */
export function createCoreServices(config: GatewayConfig, log: Logger, o: CoreServicesOptions): CoreServices {
  const fixed = [...BUILTIN_CAPABILITIES, ...(o.capabilities ?? [])];
  const catalog = new CapabilityCatalog(fixed);
  const keys = new RedisKeys(config.keyPrefix);
  const redis = connectRedis({ url: config.redisUrl, clusterNodes: config.redisClusterNodes, name: o.name });
  const bullRedis = connectRedis({ url: config.redisUrl, clusterNodes: config.redisClusterNodes, name: `${o.name}-bull`, forBullmq: true });
  const paymentChain = new PaymentChainMonitor(config.payment.rpcUrl, config.payment.rpcTimeoutMs);
  const paymentClient = createPublicClient({ chain: config.payment.chain, transport: paymentChain.transport(), pollingInterval: 250 }) as PublicClient;
  const { refunds, providerLedger } = createRefundsAndLedger({
    redis,
    keys,
    bullRedis,
    providers: config.providers,
    observer: o.observer,
    // a credit on a provider offer is held as its trust tier says (docs/trust-v1.md "Dispute hold tiers")
    holdSeconds: (credit) => providers.holdSeconds(credit),
  });
  const providers = createProcessProviders({ redis, keys, config, catalog, log, ledger: providerLedger, earnings: o.earnings, scorer: o.offerScorer });
  const accountLedger = new Ledger(redis, keys);
  return {
    config,
    log,
    keys,
    redis,
    bullRedis,
    paymentChain,
    paymentClient,
    catalog,
    fixedCapabilityIds: new Set(fixed.map((d) => d.id)),
    providers,
    refunds,
    providerLedger,
    executions: new ExecutionStore(redis, keys),
    telemetry: new Telemetry(redis, keys),
    accountLedger,
    creditReversal: paymentReversals(providerLedger, accountLedger),
    async close() {
      await providers.close();
      await refunds.close().catch(() => undefined);
      redis.disconnect();
      bullRedis.disconnect();
    },
  };
}
