import type { CapabilityCatalog, ExecutableCapability } from '@acg/capabilities';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CapabilityOffer } from '@acg/schemas';
import { formatUnits } from 'viem';
import { contractCapability, contractsOf, routableOffers, routeContract, type Contract, type ProviderRuntime } from './definition.js';
import type { RankedOffers, RoutingOptions } from './routing.js';
import type { ProviderRecord, ProviderStore } from './store.js';

/** The catalog source name provider capabilities are published under. */
export const PROVIDERS_SOURCE = 'providers';

/**
 * Keeps a process's {@link CapabilityCatalog} in step with the providers in Redis (docs/decisions.md
 * "Providers"): loads every active provider's offers, grouped by capability id into contracts
 * ({@link contractCapability}, docs/marketplace.md), into the catalog source `providers`, reloads when a registration, update or retirement is
 * announced on the store's pub/sub channel (every gateway and worker sees it within one round
 * trip), and also every `pollMs` (default 10 s) in case a message was missed while disconnected.
 * A stored offer that no longer compiles is left out with a warning, never crashing the process.
 */
export class ProviderDirectory {
  private subscriber?: Redis;
  private timer?: NodeJS.Timeout;
  private loading?: Promise<void>;
  private again = false;
  private records: ProviderRecord[] = [];
  private byId = new Map<string, Contract>();
  private signature = '';

  constructor(
    private readonly o: {
      store: ProviderStore;
      catalog: Pick<CapabilityCatalog, 'setSource'>;
      runtime: ProviderRuntime;
      log: Pick<Logger, 'warn' | 'info'>;
      pollMs?: number;
    },
  ) {}

  /** Active providers as last loaded. */
  providers(): readonly ProviderRecord[] {
    return this.records;
  }

  /** The contracts of active providers as last loaded, each with its offers (docs/marketplace.md). */
  contracts(): readonly Contract[] {
    return [...this.byId.values()];
  }

  /** The contract with this capability id, if providers offer it. */
  contract(capabilityId: string): Contract | undefined {
    return this.byId.get(capabilityId);
  }

  /**
   * The offers of `capabilityId` to try for a request's `routing`, in order ({@link rankOffers} over
   * the current measurements and trust scores); undefined when providers do not offer that id.
   */
  async route(capabilityId: string, routing: RoutingOptions): Promise<RankedOffers | undefined> {
    const contract = this.byId.get(capabilityId);
    return contract ? routeContract(contract, routing, this.o.runtime) : undefined;
  }

  /**
   * The offers of `capabilityId` as `/registry` and the catalog list them (`CapabilityOffer`:
   * price in decimal USDC, measured p50/p99 in ms, success rate, trust score, status), cheapest
   * first; undefined when providers do not offer that id.
   */
  async offers(capabilityId: string): Promise<CapabilityOffer[] | undefined> {
    const contract = this.byId.get(capabilityId);
    if (!contract) return undefined;
    const { offers, scores } = await routableOffers(contract, this.o.runtime);
    return offers
      .sort((a, b) => (a.price === b.price ? (a.provider_id < b.provider_id ? -1 : 1) : a.price < b.price ? -1 : 1))
      .map((o) => ({
        provider_id: o.provider_id,
        provider: o.provider,
        price: formatUnits(o.price, 6),
        currency: 'USDC' as const,
        latency_ms_p50: o.latency_ms_p50,
        latency_ms_p99: o.latency_ms_p99,
        success_rate: o.success_rate,
        trust_score: scores.get(o.provider_id) ?? null,
        status: o.status,
      }));
  }

  /** Loads now; concurrent calls share one load, and a call during a load schedules one more. */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = this.load().finally(() => {
      this.loading = undefined;
      if (this.again) {
        this.again = false;
        void this.reload();
      }
    });
    return this.loading;
  }

  /** First load, then follow changes: `subscriber` is a dedicated connection (it enters subscriber mode). */
  async start(subscriber?: Redis): Promise<void> {
    if (subscriber) {
      this.subscriber = subscriber;
      subscriber.on('error', () => undefined); // an outage shows as a failed reload; ioredis reconnects and resubscribes
      subscriber.on('message', () => void this.reload().catch(() => undefined));
      await subscriber
        .subscribe(this.o.store.channel())
        .catch((e) => this.o.log.warn({ err: String(e).slice(0, 200) }, 'provider change channel unavailable; polling only'));
    }
    await this.reload().catch((e) => this.o.log.warn({ err: String(e).slice(0, 200) }, 'providers could not be loaded; retrying'));
    const pollMs = this.o.pollMs ?? 10_000;
    if (pollMs > 0) {
      this.timer = setInterval(() => void this.reload().catch(() => undefined), pollMs);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.subscriber?.disconnect();
  }

  private async load(): Promise<void> {
    const records = await this.o.store.active();
    // unchanged providers keep the catalog (and every document cache) as it is
    const signature = records
      .map((r) => `${r.provider_id}@${r.updated_at}`)
      .sort()
      .join(',');
    if (signature === this.signature) return;
    this.signature = signature;
    const definitions: ExecutableCapability[] = [];
    const byId = new Map<string, Contract>();
    for (const contract of contractsOf(records)) {
      try {
        definitions.push(contractCapability(contract, this.o.runtime));
        byId.set(contract.id, contract);
      } catch (e) {
        this.o.log.warn({ capability_id: contract.id, err: String((e as Error).message).slice(0, 200) }, 'provider contract left out');
      }
    }
    this.records = records;
    this.byId = byId;
    const dropped = this.o.catalog.setSource(PROVIDERS_SOURCE, definitions);
    if (dropped.length > 0) this.o.log.warn({ capability_ids: dropped }, 'provider capabilities clash with built-in ids; left out');
  }
}
