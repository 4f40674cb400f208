import type { CapabilityCatalog, ExecutableCapability } from '@acg/capabilities';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { providerCapability, type ProviderRuntime } from './definition.js';
import type { ProviderRecord, ProviderStore } from './store.js';

/** The catalog source name provider capabilities are published under. */
export const PROVIDERS_SOURCE = 'providers';

/**
 * Keeps a process's {@link CapabilityCatalog} in step with the providers in Redis (docs/decisions.md
 * "Providers"): loads every active provider's offers as capabilities ({@link providerCapability})
 * into the catalog source `providers`, reloads when a registration, update or retirement is
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
    for (const record of records) {
      for (const offer of record.offers) {
        try {
          definitions.push(providerCapability(record, offer, this.o.runtime));
        } catch (e) {
          this.o.log.warn({ provider_id: record.provider_id, offer: offer.name, err: String((e as Error).message).slice(0, 200) }, 'provider offer left out');
        }
      }
    }
    this.records = records;
    const dropped = this.o.catalog.setSource(PROVIDERS_SOURCE, definitions);
    if (dropped.length > 0) this.o.log.warn({ capability_ids: dropped }, 'provider capabilities clash with built-in ids; left out');
  }
}
