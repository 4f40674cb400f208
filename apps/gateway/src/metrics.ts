import { LiquidationIndexStore } from '@acg/liquidations';
import { readChainReconciliationReport } from '@acg/reconciliation';
import {
  ChainLagMetrics,
  ChainReconciliationMetrics,
  createServiceMetrics,
  ExecutionMetrics,
  HttpMetrics,
  PaymentMetrics,
  QueueMetrics,
  type ChainLagReader,
  type QueueCountsSource,
  type Registry,
} from '@acg/observability';
import type { RedisKeys } from '@acg/redis';
import { ChainName } from '@acg/schemas';
import { ChainWatcher } from '@acg/wallet-monitor';
import type { Redis } from 'ioredis';
import type { PublicClient } from 'viem';

/**
 * The gateway's Prometheus metrics (`GET /metrics` on the gateway port), in a registry of this
 * gateway instance alone: HTTP requests and latency, payments (settled, refused, refunds queued;
 * refunds sent too when this process runs the refund worker), executions of paid calls, and what
 * is read from the shared Redis at scrape time: queue depths and block lags (the same on every
 * gateway; aggregate with `max`).
 */
export interface GatewayMetrics {
  registry: Registry;
  http: HttpMetrics;
  payments: PaymentMetrics;
  executions: ExecutionMetrics;
  /** Queue depths by name: `jobs`, `refunds`, `webhook_deliveries`; a payouts queue is one more `queues.add('payouts', queue)`. */
  queues: QueueMetrics;
}

/** A new registry with the gateway's metric families (queues are added by {@link watchSharedState}). */
export function createGatewayMetrics(): GatewayMetrics {
  return createServiceMetrics({ http: HttpMetrics, payments: PaymentMetrics, executions: ExecutionMetrics, queues: QueueMetrics });
}

/** What {@link watchSharedState} reads at scrape time. */
export interface SharedState {
  redis: Redis;
  keys: RedisKeys;
  queues: Record<string, QueueCountsSource>;
  /** Chain clients of `config.chains`: the chain head for the liquidation index lag. */
  chainClient(chain: ChainName): PublicClient | undefined;
}

/**
 * Registers the scrape-time readings of the shared state: `acg_queue_jobs{queue,state}` for each
 * queue, `acg_wallet_monitor_lag_blocks{chain}` (watcher state in Redis, as /status/health reads
 * it), `acg_liquidation_index_lag_blocks{chain}` (the chain head from its RPC minus the index's
 * block) and `acg_liquidation_index_age_seconds{chain}`. A chain without a watcher or an index is
 * absent. And the chain reconciliation's report (`acg_chain_reconciliation_*`, `ChainReconciliationMetrics`).
 */
export function watchSharedState(metrics: GatewayMetrics, s: SharedState): void {
  for (const [name, source] of Object.entries(s.queues)) metrics.queues.add(name, source);
  const chains = ChainName.options;
  const walletMonitor: ChainLagReader = async () => {
    const states = await Promise.all(chains.map((c) => ChainWatcher.state(s.redis, s.keys, c)));
    return Object.fromEntries(
      states.filter((w) => w.head !== null && w.last_processed_block !== null).map((w) => [w.chain, Number(BigInt(w.head!) - BigInt(w.last_processed_block!))]),
    );
  };
  const metas = () => Promise.all(chains.map(async (c) => [c, await new LiquidationIndexStore(s.redis, s.keys, c).meta()] as const));
  const liquidationIndex: ChainLagReader = async () => {
    const out: Record<string, number> = {};
    await Promise.all(
      (await metas()).map(async ([chain, meta]) => {
        const client = meta && s.chainClient(chain);
        if (!meta || !client) return;
        const head = await client.getBlockNumber({ cacheTime: 0 }).catch(() => undefined);
        if (head !== undefined) out[chain] = Math.max(0, Number(head) - meta.block_number);
      }),
    );
    return out;
  };
  const liquidationIndexAge: ChainLagReader = async () =>
    Object.fromEntries((await metas()).flatMap(([chain, meta]) => (meta ? [[chain, Math.max(0, (Date.now() - Date.parse(meta.updated_at)) / 1000)]] : [])));
  new ChainLagMetrics(metrics.registry, { walletMonitor, liquidationIndex, liquidationIndexAge });
  new ChainReconciliationMetrics(metrics.registry, () => readChainReconciliationReport(s.redis, s.keys));
}
