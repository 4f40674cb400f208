import { createHash } from 'node:crypto';
import {
  allDescriptors,
  buildCatalog,
  buildLegacyRegistry,
  renderLlmsTxt,
  renderSitemap,
  discoverySitemapEntries,
  type BuildContext,
  type HealthSample,
} from '@acg/registry';
import type { LatencySeries } from '@acg/redis';
import type { BuilderHealth, CapabilityOffer, HealthDocument, HealthStatus, LatencySeriesDocument, LatencySource, RegistryDocument } from '@acg/schemas';
import { DELIVERY_LATENCY_SERIES, type WalletMonitorHealth } from '@acg/wallet-monitor';
import { gatewayExecute, gatewayJobs, walletMonitor as walletMonitorCapability, type CapabilityCatalog } from '@acg/capabilities';
import type { Telemetry } from '@acg/execution';
import { trustFormulaText } from '@acg/provider-directory';
import type { ProbeStore } from './probes.js';

/** A rendered document: its bytes, ETag and when it was built. */
export interface Rendered<T = unknown> {
  value: T;
  body: Buffer;
  etag: string;
  builtAt: number;
}

function render<T>(value: T, text?: string): Rendered<T> {
  const body = Buffer.from(text ?? JSON.stringify(value));
  return { value, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, builtAt: Date.now() };
}

/** The capability whose latency is its webhook delivery latency (docs/spec-notes.md 4: "about 450 ms after block confirmation"). */
const WALLET_MONITOR_ID = walletMonitorCapability.id;

/** Minutes the latency series covers (`/status/series`, the `/status` charts). */
export const SERIES_WINDOW_MINUTES = 60;

/** Capabilities whose every call is x402-paid on the payment chain (docs/decisions.md "x402 payments"). */
const PAID_ENTRY_POINTS = new Set<string>([gatewayExecute.id, gatewayJobs.id]);

/**
 * Builds and caches the discovery documents (docs/spec-notes.md 4 "Discovery"): the catalog and /registry are
 * rebuilt at most every 60 s (or when a probe round ends), health every 10 s (docs/spec-notes.md 8). Values
 * come from the probe records and the latency samples in Redis, never constants.
 */
export class Discovery {
  private cache = new Map<string, Promise<Rendered>>();
  /** When the capability set last changed (process start until a provider comes or goes): the sitemap's lastmod of /openapi.json. */
  private catalogChangedAt = new Date().toISOString();

  constructor(
    private readonly opts: {
      baseUrl: () => string;
      builderUrl: string;
      payment: BuildContext['payment'];
      probes: ProbeStore;
      telemetry: Telemetry;
      /** The definitions the documents list (built-ins, added ones and providers'), read at each build. */
      catalog: Pick<CapabilityCatalog, 'list'>;
      /** The builder's live counters (`readBuilderHealth` of @acg/bundles); null while no builder has reported. */
      builderHealth?: () => Promise<BuilderHealth | null>;
      /** Wallet-monitor delivery latency (block confirmation → 2xx), backlog and watchers; its latency is the capability's. */
      walletMonitorHealth?: () => Promise<WalletMonitorHealth>;
      /** Calls and failures of a provider capability (`ProviderStore.counts` of @acg/provider-directory). */
      providerCounts?: (capabilityId: string) => Promise<{ calls: number; failures: number }>;
      /** The offers of each capability offered by providers (docs/marketplace.md), listed in /registry and the catalog. */
      offers?: () => Promise<Record<string, CapabilityOffer[]>>;
      /** Per-minute latency samples (`/status/series`); without it the series document has no capability. */
      latencySeries?: LatencySeries;
      /** Whether the payment chain answers; while false the x402-paid entry points (execute, jobs) are `down`. */
      paymentChainReachable?: () => Promise<boolean>;
      /** The proof scheme and JWKS URL of executable capabilities, when receipt keys are configured (read at each build). */
      proofs?: () => { scheme: string; jwksUrl: string } | undefined;
      registryTtlMs?: number;
      healthTtlMs?: number;
    },
  ) {}

  /** Drops cached documents (after a probe round, or a provider registration). */
  invalidate(): void {
    this.cache.clear();
  }

  catalog(): Promise<Rendered<RegistryDocument>> {
    return this.cached('catalog', this.opts.registryTtlMs ?? 60_000, async () => render(buildCatalog(await this.context())));
  }

  registry(): Promise<Rendered<ReturnType<typeof buildLegacyRegistry>>> {
    return this.cached('registry', this.opts.registryTtlMs ?? 60_000, async () => render(buildLegacyRegistry(await this.context())));
  }

  health(): Promise<Rendered<HealthDocument>> {
    return this.cached('health', this.opts.healthTtlMs ?? 10_000, async () => render(await this.buildHealth()));
  }

  /**
   * `/status/series`: per capability, p50/p99 per minute over the last hour, from the same samples
   * as health (the wallet monitor: its delivery latency, as health reports it). Cached like health.
   */
  series(): Promise<Rendered<LatencySeriesDocument>> {
    return this.cached('series', this.opts.healthTtlMs ?? 10_000, async () => render(await this.buildSeries()));
  }

  llmsTxt(): Promise<Rendered<string>> {
    return this.cached('llms', this.opts.registryTtlMs ?? 60_000, async () => {
      const ctx = await this.context();
      // the trust formula is published beside the catalog (docs/trust-v1.md)
      const text = `${renderLlmsTxt(buildCatalog(ctx), ctx).replace(/\n*$/, '\n')}\n## Trust scores\n\n${trustFormulaText().join('\n')}\n`;
      return render(text, text);
    });
  }

  /** Records a change of the capability set (a provider registered or retired) and drops the cached documents. */
  catalogChanged(): void {
    this.catalogChangedAt = new Date().toISOString();
    this.invalidate();
  }

  /** /sitemap.xml, each document with its `lastmod` (rebuilt with the catalog documents, at most every 60 s). */
  sitemap(): Promise<Rendered<string>> {
    return this.cached('sitemap', this.opts.registryTtlMs ?? 60_000, async () => {
      const [catalog, health] = await Promise.all([this.catalog(), this.health()]);
      const xml = renderSitemap(
        this.opts.baseUrl(),
        discoverySitemapEntries({ documents: catalog.value.generated_at, catalogChanged: this.catalogChangedAt, health: health.value.generated_at }),
      );
      return render(xml, xml);
    });
  }

  private cached<T>(name: string, ttlMs: number, build: () => Promise<Rendered<T>>): Promise<Rendered<T>> {
    const hit = this.cache.get(name) as Promise<Rendered<T>> | undefined;
    if (hit) return hit;
    const p = build();
    this.cache.set(name, p);
    p.then(
      () => setTimeout(() => this.cache.get(name) === p && this.cache.delete(name), ttlMs).unref(),
      () => this.cache.delete(name),
    );
    return p;
  }

  private async healthSamples(): Promise<{ samples: Record<string, HealthSample>; doc: HealthDocument['capabilities'] }> {
    const probes = await this.opts.probes.all();
    const samples: Record<string, HealthSample> = {};
    const doc: HealthDocument['capabilities'] = [];
    const walletMonitor = await this.opts.walletMonitorHealth?.().catch(() => undefined);
    const chainUp = (await this.opts.paymentChainReachable?.().catch(() => false)) ?? true;
    for (const d of allDescriptors(this.opts.catalog.list())) {
      const measured = await this.opts.telemetry.summary(d.id);
      // The wallet monitor's latency is its delivery latency (docs/spec-notes.md 4: "about 450 ms after block confirmation").
      const lat = d.id === WALLET_MONITOR_ID && walletMonitor ? { ...measured, ...walletMonitor.delivery_latency_ms } : measured;
      const probe = probes[d.id];
      let status: HealthStatus;
      if (!d.built) status = 'planned';
      else if (!probe) status = 'degraded';
      else if (!probe.ok) status = 'down';
      else status = lat.error_rate > 0.1 ? 'degraded' : 'up';
      // paid calls settle on the payment chain: without it they can only answer 503
      if (!chainUp && PAID_ENTRY_POINTS.has(d.id) && status !== 'planned') status = 'down';
      samples[d.id] = { status, latency_ms_p50: lat.p50, latency_ms_p99: lat.p99 };
      const counts = d.provider && this.opts.providerCounts ? await this.opts.providerCounts(d.id).catch(() => undefined) : undefined;
      doc.push({
        id: d.id,
        status,
        latency_ms: { p50: lat.p50, p99: lat.p99, samples: lat.samples },
        checked_at: probe?.checked_at ?? lat.last_at,
        ...(d.provider && counts ? { provider: { name: d.provider, ...counts } } : {}),
      });
    }
    return { samples, doc };
  }

  private async context(): Promise<BuildContext> {
    const [probes, { samples }, offers] = await Promise.all([this.opts.probes.all(), this.healthSamples(), this.opts.offers?.().catch(() => undefined)]);
    return {
      ...(offers ? { offers } : {}),
      baseUrl: this.opts.baseUrl(),
      builderUrl: this.opts.builderUrl,
      generatedAt: new Date().toISOString(),
      payment: this.opts.payment,
      capabilities: this.opts.catalog.list(),
      proofs: this.opts.proofs?.(),
      probes,
      health: samples,
    };
  }

  private async buildSeries(): Promise<LatencySeriesDocument> {
    const ids = allDescriptors(this.opts.catalog.list()).map((d) => d.id);
    const sourceOf = (id: string): { name: string; source: LatencySource } =>
      id === WALLET_MONITOR_ID && this.opts.walletMonitorHealth
        ? { name: DELIVERY_LATENCY_SERIES, source: 'webhook_deliveries' }
        : { name: id, source: 'executions_and_probes' };
    const now = Date.now();
    const names = ids.map((id) => sourceOf(id).name);
    const read = this.opts.latencySeries ? await this.opts.latencySeries.read(names, SERIES_WINDOW_MINUTES, now) : {};
    return {
      // the time the window ends at: its last point is this minute
      generated_at: new Date(now).toISOString(),
      bucket_seconds: 60,
      window_minutes: SERIES_WINDOW_MINUTES,
      capabilities: ids.flatMap((id) => {
        const { name, source } = sourceOf(id);
        const s = read[name];
        return s ? [{ id, source, window: s.window, points: s.points }] : [];
      }),
    };
  }

  private async buildHealth(): Promise<HealthDocument> {
    const ctx = await this.context();
    const [{ doc }, builder, walletMonitor] = await Promise.all([
      this.healthSamples(),
      this.opts.builderHealth?.() ?? Promise.resolve(null),
      this.opts.walletMonitorHealth?.().catch(() => undefined),
    ]);
    const catalog = buildCatalog(ctx);
    const health: HealthDocument = {
      operational_status: catalog.network.operational_status,
      generated_at: new Date().toISOString(),
      capabilities: doc,
      builder,
    };
    // `wallet_monitor`: delivery latency p50/p99, backlog (waiting, delayed retries, active, dead letters) and watchers.
    return walletMonitor ? Object.assign(health, { wallet_monitor: walletMonitor }) : health;
  }
}
