import type { SecretBox } from '@acg/secrets';
import { Ledger } from '@acg/accounts';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { createPublicClient, http, type PublicClient } from 'viem';
import { AddressIndex, AddressMatcher } from './addressIndex.js';
import { CHAIN_NAMES, DEFAULT_RETRY_SCHEDULE_MS, type ChainName } from './config.js';
import { webhookPolicyFromEnv, type UrlPolicy } from '@acg/net-guard';
import { startDeliveryWorker, type DeliveryObserver, type DeliveryWorker } from './delivery.js';
import { WalletMonitorService } from './service.js';
import { ChainWatcher } from './watcher.js';

/** One watched chain. */
export interface WatchedChainConfig {
  /** JSON-RPC URL (http or https). */
  rpcUrl: string;
  /**
   * WebSocket JSON-RPC URL for the `newHeads` subscription; `false` to poll only. Default: the
   * chain's `*_WS_URL` variable (`ETHEREUM_WS_URL`, `BASE_WS_URL`, `ARBITRUM_WS_URL`), else, for a
   * plain `http://` RPC URL (dev chains: anvil serves WebSocket on the same port), the same URL as
   * `ws://`; an `https://` provider needs its WebSocket URL configured.
   */
  wsUrl?: string | false;
  /** confirmation depth (default 1 on anvil, else 3) */
  confirmations?: number;
  /** `auto` (default: trace_block, else debug_traceBlockByHash, else transactions), `off`, or a source to force */
  traces?: 'auto' | 'off' | 'trace_block' | 'debug_trace' | 'transactions';
}

/** Configuration of {@link startWalletMonitor}. */
export interface WalletMonitorConfig {
  /** Redis URL (or pass `redis` and `bullRedis`). */
  redisUrl?: string;
  /** Redis Cluster startup nodes, `host:port` each (REDIS_CLUSTER_NODES): with `redisUrl`, the connections are an ioredis `Cluster`. */
  redisClusterNodes?: string[];
  redis?: Redis;
  bullRedis?: Redis;
  /** key prefix of the deployment (REDIS_KEY_PREFIX, default `acg:`) */
  keyPrefix?: string;
  /** chains to watch: one watcher each (ETHEREUM_RPC_URL, BASE_RPC_URL, ARBITRUM_RPC_URL) */
  chains: Partial<Record<ChainName, WatchedChainConfig>>;
  /** webhook URL policy (default: `webhookPolicyFromEnv(process.env)`) */
  policy?: UrlPolicy;
  /** delay before each delivery attempt, ms (default of docs/decisions.md "Wallet monitor": 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h) */
  retryScheduleMs?: readonly number[];
  /** parallel deliveries (default 64) */
  concurrency?: number;
  /** per-attempt timeout, ms (default 10 000) */
  deliveryTimeoutMs?: number;
  /** head polling interval when idle, ms (default 200); the fallback while no `newHeads` subscription is live */
  pollIntervalMs?: number;
  /** seconds between renewal sweeps (default 60; 0 disables the timer) */
  renewalIntervalSeconds?: number;
  /** subscription term, seconds (default 30 days) */
  termSeconds?: number;
  /** encrypts webhook signing secrets at rest (WEBHOOK_SECRET_KEY); must match the gateway's */
  secretBox?: SecretBox;
  /** run the watchers (default true) */
  watchers?: boolean;
  /** run the delivery worker (default true) */
  deliveryWorker?: boolean;
  /** told of each delivery attempt's outcome (metrics) */
  deliveryObserver?: DeliveryObserver;
  /**
   * Lines carry `component` (`delivery`, `watcher` with `chain`) under this logger's bindings; give
   * it `module: 'wallet-monitor'` (the app's key), never `component` or `chain`.
   */
  log?: Logger;
}

/** A running wallet monitor. */
export interface RunningWalletMonitor {
  service: WalletMonitorService;
  watchers: ChainWatcher[];
  delivery: DeliveryWorker | undefined;
  /** Runs one renewal sweep now. */
  renewNow(): Promise<{ renewed: string[]; expired: string[] }>;
  /** Stops watchers, the worker and the renewal timer; closes connections it opened. */
  stop(): Promise<void>;
}

/** Environment variable of each chain's WebSocket JSON-RPC URL (`off` disables the subscription). */
export const WS_URL_VARS: Record<ChainName, string> = { ethereum: 'ETHEREUM_WS_URL', base: 'BASE_WS_URL', arbitrum: 'ARBITRUM_WS_URL' };

/**
 * The WebSocket URL a watcher subscribes to `newHeads` on, or undefined to poll only: `wsUrl`
 * when configured (`false` = none); else the chain's `*_WS_URL` variable (`off` or empty = none);
 * else, for an `http://` RPC URL, the same URL as `ws://` (anvil serves both on one port).
 * An `https://` RPC URL gets no derived WebSocket URL (providers serve it elsewhere).
 */
export function resolveWsUrl(chain: ChainName, c: WatchedChainConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (c.wsUrl === false) return undefined;
  if (c.wsUrl) return c.wsUrl;
  const fromEnv = env[WS_URL_VARS[chain]];
  if (fromEnv !== undefined) return fromEnv === '' || fromEnv === 'off' ? undefined : fromEnv;
  try {
    const u = new URL(c.rpcUrl);
    if (u.protocol !== 'http:') return undefined;
    u.protocol = 'ws:';
    return u.toString();
  } catch {
    return undefined;
  }
}

/**
 * Reads the wallet monitor's configuration from the environment: `ETHEREUM_RPC_URL`,
 * `BASE_RPC_URL`, `ARBITRUM_RPC_URL` (a watcher per chain set), `ETHEREUM_WS_URL`, `BASE_WS_URL`,
 * `ARBITRUM_WS_URL` (the `newHeads` subscription; `off` to poll only), `WALLET_MONITOR_CONFIRMATIONS`
 * (`ethereum=3,base=3,arbitrum=3` or one number for all), `REDIS_URL`, `REDIS_KEY_PREFIX`,
 * `WEBHOOK_POLICY` / `NODE_ENV` (see `webhookPolicyFromEnv`), over `defaults`.
 */
export function walletMonitorConfigFromEnv(env: NodeJS.ProcessEnv, defaults: Partial<WalletMonitorConfig> = {}): WalletMonitorConfig {
  const chains: Partial<Record<ChainName, WatchedChainConfig>> = { ...defaults.chains };
  const urls: Record<ChainName, string | undefined> = { ethereum: env.ETHEREUM_RPC_URL, base: env.BASE_RPC_URL, arbitrum: env.ARBITRUM_RPC_URL };
  for (const c of CHAIN_NAMES) if (urls[c]) chains[c] = { ...chains[c], rpcUrl: urls[c]! };
  for (const c of CHAIN_NAMES) {
    const ws = WS_URL_VARS[c];
    if (chains[c] && env[ws] !== undefined && chains[c]!.wsUrl === undefined)
      chains[c] = { ...chains[c]!, wsUrl: env[ws] === '' || env[ws] === 'off' ? false : env[ws] };
  }
  const conf = env.WALLET_MONITOR_CONFIRMATIONS;
  if (conf) {
    for (const part of conf.split(',')) {
      const [k, v] = part.includes('=') ? part.split('=') : [undefined, part];
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new Error('WALLET_MONITOR_CONFIRMATIONS must be a positive integer or chain=n pairs');
      for (const c of CHAIN_NAMES) if ((k === undefined || k.trim() === c) && chains[c]) chains[c] = { ...chains[c]!, confirmations: n };
    }
  }
  return {
    ...defaults,
    redisUrl: env.REDIS_URL ?? defaults.redisUrl,
    redisClusterNodes: env.REDIS_CLUSTER_NODES ? env.REDIS_CLUSTER_NODES.split(',').map((n) => n.trim()) : defaults.redisClusterNodes,
    keyPrefix: env.REDIS_KEY_PREFIX ?? defaults.keyPrefix,
    chains,
    policy: webhookPolicyFromEnv(env, defaults.policy),
  };
}

/**
 * Starts the wallet monitor (docs/decisions.md "Wallet monitor"): one {@link ChainWatcher} per configured
 * chain, the BullMQ delivery worker and the renewal sweep. Safe to run in several processes
 * against one Redis: a per-chain lease keeps one active watcher per chain, deliveries are
 * shared by BullMQ, and renewal is atomic per subscription.
 * Throws when Redis is unreachable.
 */
export async function startWalletMonitor(config: WalletMonitorConfig): Promise<RunningWalletMonitor> {
  const log = config.log ?? pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'wallet-monitor' } });
  const keys = new RedisKeys(config.keyPrefix ?? 'acg:');
  const owned: Redis[] = [];
  const own = (r: Redis): Redis => {
    owned.push(r);
    return r;
  };
  const clusterNodes = config.redisClusterNodes?.length ? config.redisClusterNodes : undefined;
  const url = config.redisUrl ?? (clusterNodes ? `redis://${clusterNodes[0]}` : undefined);
  const redis = config.redis ?? own(connectRedis({ url: need(url), clusterNodes, name: 'wallet-monitor' }));
  const bullRedis = config.bullRedis ?? own(connectRedis({ url: need(url), clusterNodes, name: 'wallet-monitor-bull', forBullmq: true }));
  await redis.ping();
  const policy = config.policy ?? webhookPolicyFromEnv(process.env);
  const retryScheduleMs = config.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
  const service = new WalletMonitorService({ redis, bullRedis, keys, policy, retryScheduleMs, termSeconds: config.termSeconds, secretBox: config.secretBox });

  const delivery =
    config.deliveryWorker === false
      ? undefined
      : startDeliveryWorker({
          redis,
          keys,
          connection: bullRedis,
          subscriptions: service.subscriptions,
          ledger: new Ledger(redis, keys),
          policy,
          retryScheduleMs,
          concurrency: config.concurrency,
          timeoutMs: config.deliveryTimeoutMs,
          log: log.child({ component: 'delivery' }),
          observer: config.deliveryObserver,
        });

  const watchers: ChainWatcher[] = [];
  if (config.watchers !== false) {
    for (const chain of CHAIN_NAMES) {
      const c = config.chains[chain];
      if (!c) continue;
      const client = createPublicClient({ transport: http(c.rpcUrl, { timeout: 10_000, retryCount: 2 }) }) as PublicClient;
      const matcher = new AddressMatcher(redis, keys, new AddressIndex(redis, keys));
      watchers.push(
        new ChainWatcher({
          chain,
          client,
          redis,
          keys,
          matcher,
          subscriptions: service.subscriptions,
          queue: service.deliveries,
          log, // the watcher binds `component` and `chain` itself
          confirmations: c.confirmations,
          traces: c.traces,
          pollIntervalMs: config.pollIntervalMs,
          wsUrl: resolveWsUrl(chain, c),
        }),
      );
    }
    await Promise.all(watchers.map((w) => w.start()));
  }

  const renewNow = async () => {
    const r = await service.subscriptions.renewDue();
    if (r.renewed.length || r.expired.length) log.info({ renewed: r.renewed.length, expired: r.expired.length }, 'subscription renewal sweep');
    return r;
  };
  const every = config.renewalIntervalSeconds ?? 60;
  const timer =
    every > 0
      ? setInterval(() => void renewNow().catch((e) => log.warn({ err: String(e.message).slice(0, 200) }, 'renewal sweep failed')), every * 1000)
      : undefined;
  timer?.unref();
  void renewNow().catch(() => undefined);

  log.info({ chains: watchers.map((w) => w.chain), policy }, 'wallet monitor started');
  return {
    service,
    watchers,
    delivery,
    renewNow,
    async stop() {
      if (timer) clearInterval(timer);
      await Promise.all(watchers.map((w) => w.stop()));
      await delivery?.close();
      await service.close();
      for (const r of owned) r.disconnect();
    },
  };
}

function need(url: string | undefined): string {
  if (!url) throw new Error('REDIS_URL (redisUrl) is required for the wallet monitor');
  return url;
}
