import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics of the service (docs/decisions.md "Operations"), with prom-client. Every service
 * instance (a gateway, a builder, a worker) owns one {@link Registry}, never prom-client's global
 * default one: `npm start` runs all three in one process, and each serves its own `/metrics`
 * without name clashes. The metric families below are registered into a given registry by one
 * function each; the packages never import prom-client: they report through small observer
 * interfaces (`PaymentObserver` of @acg/payments, `ExecutionObserver` of @acg/execution,
 * `JobObserver` of @acg/jobs, `DeliveryObserver` of @acg/wallet-monitor) that these classes satisfy.
 *
 * Names carry the `acg_` prefix and their unit (`_seconds`, `_blocks`, `_usdc`), counters end in
 * `_total`, and labels are low-cardinality: a route TEMPLATE, never a raw path; an x402 reason code
 * outside `[a-z0-9_]{1,64}` is counted as `other`.
 */

/** Latency buckets, seconds: 1 ms to 10 s. */
export const LATENCY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const CODE = /^[a-z0-9_]{1,64}$/;

/** A label value from a code that may come from outside (a facilitator's reason): itself when it is a plain code, else `other`. */
export function codeLabel(code: string | undefined): string {
  return code && CODE.test(code) ? code : 'other';
}

/**
 * A registry of its own for one service instance, with Node's process metrics
 * (`process_*`, `nodejs_*`, prom-client's default collectors) unless `processMetrics: false`.
 */
export function createRegistry(opts: { processMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}

/** A metric family: a class whose constructor registers its metrics into `registry` (`HttpMetrics`, `PaymentMetrics`, ...). */
export type MetricFamilyClass<T> = new (registry: Registry) => T;

/** What {@link createServiceMetrics} returns: the registry and one instance of each family, by the key it was given under. */
export type ServiceMetrics<F extends Record<string, MetricFamilyClass<unknown>>> = { registry: Registry } & { [K in keyof F]: InstanceType<F[K]> };

/**
 * A service instance's metrics: a new registry ({@link createRegistry}, with Node's process
 * metrics) and one instance of each family of `families`, registered in key order (the order of
 * the families in `/metrics`). The gateway's and the worker's metrics are built with it.
 *
 * @example createServiceMetrics({ http: HttpMetrics, payments: PaymentMetrics }) // { registry, http, payments }
 * @throws Error - from prom-client when two families register a metric of the same name.
 */
export function createServiceMetrics<F extends Record<string, MetricFamilyClass<unknown>>>(families: F): ServiceMetrics<F> {
  const registry = createRegistry();
  const metrics: Record<string, unknown> = { registry };
  for (const [name, Family] of Object.entries(families)) metrics[name] = new Family(registry);
  return metrics as ServiceMetrics<F>;
}

/**
 * HTTP requests of one server: `acg_http_requests_total{route,method,status}` and
 * `acg_http_request_duration_seconds{route,method}` (histogram). `route` is the path template
 * (`/api/v1/jobs/{job_id}`), `unmatched` for a path no route serves; `method` is one of the
 * standard methods or `other`.
 */
export class HttpMetrics {
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly duration: Histogram<'route' | 'method'>;
  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'acg_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status code.',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'acg_http_request_duration_seconds',
      help: 'Time from the request head to the end of the response, seconds, by route template and method.',
      labelNames: ['route', 'method'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers: [registry],
    });
  }

  /** One answered request; `seconds` from its head to the end of its response. */
  observe(route: string, method: string, status: number, seconds: number): void {
    const m = METHODS.has(method) ? method : 'other';
    this.requests.inc({ route, method: m, status: String(status) });
    this.duration.observe({ route, method: m }, seconds);
  }
}

/**
 * Payments (satisfies `PaymentObserver` of @acg/payments): `acg_payments_settled_total{route}`,
 * `acg_payments_settled_usdc_total{route}` (USDC, decimal), `acg_payments_refused_total{reason}`
 * (x402 reason code), `acg_refunds_queued_total`, `acg_refunds_sent_total`,
 * `acg_refund_attempts_failed_total`.
 */
export class PaymentMetrics {
  private readonly settledCount: Counter<'route'>;
  private readonly settledUsdc: Counter<'route'>;
  private readonly refusedCount: Counter<'reason'>;
  private readonly queued: Counter;
  private readonly sent: Counter;
  private readonly failedAttempts: Counter;
  constructor(registry: Registry) {
    const registers = [registry];
    this.settledCount = new Counter({
      name: 'acg_payments_settled_total',
      help: 'x402 payments settled on chain, by paid route (execute, jobs, ...).',
      labelNames: ['route'],
      registers,
    });
    this.settledUsdc = new Counter({
      name: 'acg_payments_settled_usdc_total',
      help: 'USDC settled by x402 payments (decimal USDC, 6-decimal base units / 1e6), by paid route.',
      labelNames: ['route'],
      registers,
    });
    this.refusedCount = new Counter({
      name: 'acg_payments_refused_total',
      help: 'x402 payments refused with a 402, by x402 reason code (other: a code outside [a-z0-9_]).',
      labelNames: ['reason'],
      registers,
    });
    this.queued = new Counter({ name: 'acg_refunds_queued_total', help: 'Refunds recorded and queued (once per operation).', registers });
    this.sent = new Counter({ name: 'acg_refunds_sent_total', help: 'Refund transfers mined (treasury to payer).', registers });
    this.failedAttempts = new Counter({
      name: 'acg_refund_attempts_failed_total',
      help: 'Refund attempts that failed and are retried by the queue.',
      registers,
    });
  }

  settled(e: { route: string; amount: string }): void {
    this.settledCount.inc({ route: e.route });
    this.settledUsdc.inc({ route: e.route }, Number(e.amount) / 1e6);
  }

  refused(e: { reason: string }): void {
    this.refusedCount.inc({ reason: codeLabel(e.reason) });
  }

  refundQueued(): void {
    this.queued.inc();
  }

  refundSent(): void {
    this.sent.inc();
  }

  refundAttemptFailed(): void {
    this.failedAttempts.inc();
  }
}

/**
 * Capability executions (satisfies `ExecutionObserver` of @acg/execution), paid calls and job steps
 * alike: `acg_executions_total{capability,outcome}` (`succeeded` or `failed`) and
 * `acg_execution_duration_seconds{capability}`.
 */
export class ExecutionMetrics {
  private readonly count: Counter<'capability' | 'outcome'>;
  private readonly duration: Histogram<'capability'>;
  constructor(registry: Registry) {
    this.count = new Counter({
      name: 'acg_executions_total',
      help: 'Capability executions recorded, by capability id and outcome (succeeded, failed).',
      labelNames: ['capability', 'outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'acg_execution_duration_seconds',
      help: 'Run time of a capability execution, seconds, by capability id.',
      labelNames: ['capability'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers: [registry],
    });
  }

  executed(e: { capability_id: string; status: 'SUCCEEDED' | 'FAILED'; duration_ms: number }): void {
    this.count.inc({ capability: e.capability_id, outcome: e.status === 'SUCCEEDED' ? 'succeeded' : 'failed' });
    this.duration.observe({ capability: e.capability_id }, e.duration_ms / 1000);
  }
}

/**
 * Jobs (satisfies `JobObserver` of @acg/jobs): `acg_job_steps_total{outcome}` (`succeeded`,
 * `failed`, `retried` after a transient failure, `adopted` after a crash) and
 * `acg_jobs_finished_total{status}` (`succeeded`, `failed`, `cancelled`, `budget_exhausted`).
 */
export class JobMetrics {
  private readonly steps: Counter<'outcome'>;
  private readonly finished: Counter<'status'>;
  constructor(registry: Registry) {
    this.steps = new Counter({
      name: 'acg_job_steps_total',
      help: 'Job steps by outcome: succeeded, failed, retried (transient failure), adopted (stored execution found after a crash).',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.finished = new Counter({
      name: 'acg_jobs_finished_total',
      help: 'Jobs that ended, by status (succeeded, failed, cancelled, budget_exhausted).',
      labelNames: ['status'],
      registers: [registry],
    });
  }

  step(outcome: 'succeeded' | 'failed' | 'retried' | 'adopted'): void {
    this.steps.inc({ outcome });
  }

  jobFinished(status: string): void {
    this.finished.inc({ status });
  }
}

/**
 * Webhook deliveries (satisfies `DeliveryObserver` of @acg/wallet-monitor):
 * `acg_webhook_deliveries_total{outcome}`: `delivered` (2xx), `failed` (an attempt that is retried),
 * `dead_lettered` (after the last attempt), `dropped` (cancelled or unknown subscription).
 */
export class DeliveryMetrics {
  private readonly count: Counter<'outcome'>;
  constructor(registry: Registry) {
    this.count = new Counter({
      name: 'acg_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered, failed (retried), dead_lettered, dropped.',
      labelNames: ['outcome'],
      registers: [registry],
    });
  }

  delivery(outcome: 'delivered' | 'failed' | 'dead_lettered' | 'dropped'): void {
    this.count.inc({ outcome });
  }
}

/**
 * The builder ({builder_url}): `acg_builder_bundles_received_total` (queued by `eth_sendBundle`),
 * `acg_builder_bundles_simulated_total{outcome}` (`valid`, `invalid`: each bundle simulated alone
 * per attempt), `acg_builder_bundles_included_total`, `acg_builder_blocks_submitted_total` and
 * `acg_builder_relay_submissions_total{relay,outcome}` (`accepted`, `refused`, `unreachable`;
 * `sum by (relay)` is what was submitted to each relay).
 */
export class BuilderMetrics {
  private readonly received: Counter;
  private readonly simulated: Counter<'outcome'>;
  private readonly included: Counter;
  private readonly blocks: Counter;
  private readonly submissions: Counter<'relay' | 'outcome'>;
  constructor(registry: Registry) {
    const registers = [registry];
    this.received = new Counter({ name: 'acg_builder_bundles_received_total', help: 'Bundles accepted by eth_sendBundle and queued.', registers });
    this.simulated = new Counter({
      name: 'acg_builder_bundles_simulated_total',
      help: 'Bundles simulated alone in a block-construction attempt, by outcome (valid, invalid).',
      labelNames: ['outcome'],
      registers,
    });
    this.included = new Counter({ name: 'acg_builder_bundles_included_total', help: 'Bundles included in a built block.', registers });
    this.blocks = new Counter({ name: 'acg_builder_blocks_submitted_total', help: 'Blocks built, signed and submitted to the relays.', registers });
    this.submissions = new Counter({
      name: 'acg_builder_relay_submissions_total',
      help: 'Block submissions per relay, by outcome (accepted: 2xx; refused: other status; unreachable: no answer or timeout).',
      labelNames: ['relay', 'outcome'],
      registers,
    });
  }

  bundleReceived(): void {
    this.received.inc();
  }

  bundlesSimulated(valid: number, invalid: number): void {
    if (valid > 0) this.simulated.inc({ outcome: 'valid' }, valid);
    if (invalid > 0) this.simulated.inc({ outcome: 'invalid' }, invalid);
  }

  blockSubmitted(bundles: number): void {
    this.blocks.inc();
    if (bundles > 0) this.included.inc(bundles);
  }

  relaySubmission(relay: string, outcome: 'accepted' | 'refused' | 'unreachable'): void {
    this.submissions.inc({ relay, outcome });
  }
}

/** Something with BullMQ's `Queue.getJobCounts` (a BullMQ `Queue`, or a class wrapping one). */
export interface QueueCountsSource {
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

/** Queue states reported by {@link QueueMetrics}. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'paused', 'failed'] as const;

/**
 * Queue depths read on each scrape (BullMQ `getJobCounts`): `acg_queue_jobs{queue,state}` for every
 * queue added with {@link add} (`jobs`, `refunds`, `webhook_deliveries`; a later `payouts` queue is
 * one more `add`). A queue whose counts cannot be read (Redis down) is left out of that scrape.
 */
export class QueueMetrics {
  private readonly queues = new Map<string, QueueCountsSource>();
  constructor(registry: Registry) {
    const queues = this.queues;
    new Gauge({
      name: 'acg_queue_jobs',
      help: 'BullMQ jobs per queue and state (waiting, active, delayed, prioritized, paused, failed), read at scrape time.',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        this.reset();
        await Promise.all(
          [...queues].map(async ([queue, source]) => {
            const counts = await withTimeout(source.getJobCounts(...QUEUE_STATES)).catch(() => undefined);
            if (!counts) return;
            for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state] ?? 0);
          }),
        );
      },
    });
  }

  /** Reports `source`'s depths as queue `name` from the next scrape on. */
  add(name: string, source: QueueCountsSource): void {
    this.queues.set(name, source);
  }
}

/** Per-chain block lags, read on each scrape: chain name → blocks behind (absent: unknown). */
export type ChainLagReader = () => Promise<Record<string, number | undefined>>;

/**
 * Block lags read on each scrape: `acg_wallet_monitor_lag_blocks{chain}` (watcher head − last
 * block whose events went out, so at least the confirmation depth − 1) and
 * `acg_liquidation_index_lag_blocks{chain}` (chain head − last indexed block), plus
 * `acg_liquidation_index_age_seconds{chain}` (since the index was last written).
 */
export class ChainLagMetrics {
  constructor(registry: Registry, readers: { walletMonitor?: ChainLagReader; liquidationIndex?: ChainLagReader; liquidationIndexAge?: ChainLagReader }) {
    const gauge = (name: string, help: string, read: ChainLagReader | undefined) => {
      if (!read) return;
      new Gauge({
        name,
        help,
        labelNames: ['chain'],
        registers: [registry],
        async collect() {
          this.reset();
          const lags = await withTimeout(read()).catch(() => ({}) as Record<string, number | undefined>);
          for (const [chain, lag] of Object.entries(lags)) if (lag !== undefined && Number.isFinite(lag)) this.set({ chain }, lag);
        },
      });
    };
    gauge(
      'acg_wallet_monitor_lag_blocks',
      'Wallet monitor: chain head seen by the watcher minus the last block whose events went out (includes the confirmation depth), per chain.',
      readers.walletMonitor,
    );
    gauge('acg_liquidation_index_lag_blocks', 'Liquidation index: chain head minus the last indexed block, per chain.', readers.liquidationIndex);
    gauge('acg_liquidation_index_age_seconds', 'Liquidation index: seconds since the index was last written, per chain.', readers.liquidationIndexAge);
  }
}

/** The chain reconciliation's stored report as {@link ChainReconciliationMetrics} reads it (`readChainReconciliationReport` of @acg/payments). */
export interface ReconciliationReportReading {
  matched: number;
  repaired: number;
  deferred: number;
  undecided: number;
  cursor_block: number | null;
  last_run_at: string | null;
}

/**
 * The chain reconciliation's report (docs/operating.md "Reconciliation from the chain"), read from the shared
 * Redis on each scrape, so every gateway and worker shows the same: `acg_chain_reconciliation_payments{outcome}`
 * (payments checked since the deployment began: `matched`, `repaired`, `deferred` to the crash-recovery
 * sweep, `undecided`: alert on any increase), `acg_chain_reconciliation_cursor_block` and
 * `acg_chain_reconciliation_last_run_timestamp_seconds` (absent before a first run).
 */
export class ChainReconciliationMetrics {
  constructor(registry: Registry, read: () => Promise<ReconciliationReportReading>) {
    // one small Redis hash read per family and scrape
    const current = () => withTimeout(read()).catch(() => undefined);
    new Gauge({
      name: 'acg_chain_reconciliation_payments',
      help: 'Payments into the treasury checked against the records by the chain reconciliation, cumulative, by outcome (matched, repaired, deferred, undecided).',
      labelNames: ['outcome'],
      registers: [registry],
      async collect() {
        this.reset();
        const r = await current();
        if (r) for (const outcome of ['matched', 'repaired', 'deferred', 'undecided'] as const) this.set({ outcome }, r[outcome]);
      },
    });
    new Gauge({
      name: 'acg_chain_reconciliation_cursor_block',
      help: 'The last payment-chain block the scheduled chain reconciliation checked.',
      registers: [registry],
      async collect() {
        this.reset();
        const r = await current();
        if (r?.cursor_block !== null && r?.cursor_block !== undefined) this.set(r.cursor_block);
      },
    });
    new Gauge({
      name: 'acg_chain_reconciliation_last_run_timestamp_seconds',
      help: 'When the scheduled chain reconciliation last finished a run, unix seconds.',
      registers: [registry],
      async collect() {
        this.reset();
        const r = await current();
        if (r?.last_run_at) this.set(Date.parse(r.last_run_at) / 1000);
      },
    });
  }
}

/** A scrape never waits on a slow dependency for more than this, ms. */
export const COLLECT_TIMEOUT_MS = 2_000;

function withTimeout<T>(p: Promise<T>, ms = COLLECT_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
