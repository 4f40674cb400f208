import type { CapabilityCatalog } from '@acg/capabilities';
import type { UrlPolicy } from '@acg/net-guard';
import type { RedisKeys } from '@acg/redis';
import { secretBoxFromKey } from '@acg/secrets';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ProviderClient } from './client.js';
import type { ProviderEarnings } from './definition.js';
import { ProviderDirectory } from './directory.js';
import { OfferStats } from './offerStats.js';
import type { OfferScorer } from './routing.js';
import { ProviderStore, type ProviderRecord } from './store.js';
import { creditHoldSeconds, TrustRecords, type TrustDispute } from './trustRecords.js';
import { trustScorer } from './trustScorer.js';

/** Options of {@link createProcessProviders}. */
export interface ProcessProvidersOptions {
  redis: Redis;
  keys: RedisKeys;
  /**
   * The process's configuration (`GatewayConfig` of @acg/config): PROVIDER_DISPUTE_WINDOW_SECONDS
   * (`providers.disputeWindowSeconds`, seconds), WEBHOOK_POLICY (`walletMonitor.webhookPolicy`, the
   * SSRF rules of provider endpoints; default `production`) and WEBHOOK_SECRET_KEY
   * (`walletMonitor.webhookSecretKey`; signing secrets are stored unencrypted without it).
   */
  config: { providers: { disputeWindowSeconds: number }; walletMonitor?: { webhookPolicy?: UrlPolicy; webhookSecretKey?: string } };
  /** The catalog whose `providers` source the directory keeps in step with Redis. */
  catalog: Pick<CapabilityCatalog, 'setSource'>;
  /** The process's logger; the directory logs under `module: "providers"`. */
  log: Pick<Logger, 'child'>;
  /**
   * The provider ledger (`ProviderLedger` of @acg/provider-ledger): its disputes count in trust
   * scores, and provider shares are credited to it unless `earnings` is given.
   */
  ledger: ProviderEarnings & { disputesOfProvider(providerId: string): Promise<readonly TrustDispute[]> };
  /** Where provider shares are credited instead of `ledger` (a test may capture credits). */
  earnings?: ProviderEarnings;
  /** Ranks offers for `prefer: "trusted"`; default the offers' trust-v2 scores ({@link trustScorer}). */
  scorer?: OfferScorer;
}

/** What {@link createProcessProviders} builds: the parts one gateway or worker process shares. */
export interface ProcessProviders {
  store: ProviderStore;
  client: ProviderClient;
  stats: OfferStats;
  trust: TrustRecords;
  /** Keeps `catalog` in step with the providers in Redis once `start()`ed. */
  directory: ProviderDirectory;
  /**
   * The hold of a credit, seconds: the dispute window times the answering offer's trust-tier
   * multiplier ({@link creditHoldSeconds}; docs/trust-v1.md "Dispute hold tiers"). The provider
   * ledger's `holdSeconds` option.
   */
  holdSeconds(credit: { provider_id: string; capability_id: string }): Promise<number>;
  /** Stops the directory and closes the client's connections; never throws. */
  close(): Promise<void>;
}

/**
 * The providers of one process (the gateway's and the worker's, wired the same way): the store,
 * the signed client, the per-offer stats, the trust records whose disputes come from `ledger`, and
 * the directory whose provider capabilities credit `earnings ?? ledger`, record trust evidence and
 * rank by `scorer`. Opens nothing: the directory starts with `directory.start()`.
 *
 * The ledger and the trust records need each other: build the ledger first with
 * `holdSeconds: (credit) => providers.holdSeconds(credit)` (called only once credits are made).
 *
 * @throws Error - from `secretBoxFromKey` when WEBHOOK_SECRET_KEY is not 32 bytes (64 hex characters or base64).
 */
export function createProcessProviders(o: ProcessProvidersOptions): ProcessProviders {
  const { redis, keys, config } = o;
  const store = new ProviderStore(redis, keys, secretBoxFromKey(config.walletMonitor?.webhookSecretKey));
  // job steps and executions on provider offers are trust evidence; disputes come from the provider ledger (docs/trust-v1.md)
  const trust = new TrustRecords({ redis, keys, disputes: (id) => o.ledger.disputesOfProvider(id) });
  const client = new ProviderClient(config.walletMonitor?.webhookPolicy ?? 'production');
  const stats = new OfferStats(redis, keys);
  const directory: ProviderDirectory = new ProviderDirectory({
    store,
    catalog: o.catalog,
    runtime: {
      client,
      store,
      stats,
      // `prefer: "trusted"` ranks by each offer's trust-v1 score (docs/trust-v1.md)
      scorer: o.scorer ?? trustScorer(trust, (): readonly ProviderRecord[] => directory.providers()),
      earnings: o.earnings ?? o.ledger,
      trust,
    },
    log: o.log.child({ module: 'providers' }),
  });
  return {
    store,
    client,
    stats,
    trust,
    directory,
    holdSeconds: (credit) => creditHoldSeconds({ store, trust, disputeWindowSeconds: config.providers.disputeWindowSeconds }, credit),
    async close() {
      directory.stop();
      await client.close().catch(() => undefined);
    },
  };
}
