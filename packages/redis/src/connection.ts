import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { failFastWhileUnanswered } from './failFast.js';

/** Options of {@link connectRedis}. */
export interface ConnectRedisOptions {
  /**
   * `redis://[user:password@]host:port/db` URL (`rediss://` for TLS). With `clusterNodes` its user,
   * password and TLS apply to every cluster node and its host is unused.
   */
  url: string;
  /**
   * Redis Cluster startup nodes, `host:port` each (REDIS_CLUSTER_NODES; see {@link parseClusterNodes}).
   * Set and not empty: the connection is an ioredis `Cluster` (docs/decisions.md "Operations").
   */
  clusterNodes?: readonly string[];
  /** Connection name shown by CLIENT LIST, e.g. `gateway`. */
  name?: string;
  /** BullMQ workers need `maxRetriesPerRequest: null` (docs/pitfalls.md). */
  forBullmq?: boolean;
  /**
   * ioredis `enableAutoPipelining`: commands issued in the same event-loop tick go out in one
   * write (the builder's intake: many small requests at once, about 1.5x the bundles/s on 2 cores,
   * bench/README.md). Not for BullMQ connections (blocking commands); ignored with `forBullmq`.
   */
  autoPipelining?: boolean;
}

/** Reconnect delay after the n-th failed attempt, ms: 50, 100, 200... capped at 1 s, never giving up. */
export const reconnectDelay = (attempt: number): number => Math.min(50 * 2 ** Math.max(0, attempt - 1), 1_000);

/**
 * Longest time one command may wait for its reply on a request connection, ms. With the fail-fast
 * health check (`failFastWhileUnanswered`: Redis counts as down after 1.5 s without a PONG) a
 * request waits for at most one such command, so it is answered within about 3 s of Redis freezing.
 */
export const COMMAND_TIMEOUT_MS = 3_000;

/**
 * Parses REDIS_CLUSTER_NODES: comma-separated `host:port` entries (`[v6]:port` for an IPv6
 * address), spaces ignored.
 *
 * @returns One `{host, port}` per entry, in order.
 * @throws {Error} Naming the first malformed entry (no port, port outside 1..65535, empty host), or
 *   when there is no entry at all.
 *
 * @example parseClusterNodes('10.0.0.1:7000, 10.0.0.2:7000') // [{host: '10.0.0.1', port: 7000}, {host: '10.0.0.2', port: 7000}]
 */
export function parseClusterNodes(value: string | readonly string[]): { host: string; port: number }[] {
  const entries = (typeof value === 'string' ? value.split(',') : value).map((s) => s.trim()).filter(Boolean);
  if (entries.length === 0) throw new Error('no host:port entry');
  return entries.map((entry) => {
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(entry);
    const port = m ? Number(m[3]) : 0;
    if (!m || port < 1 || port > 65535) throw new Error(`"${entry}" is not host:port`);
    return { host: m[1] ?? m[2], port };
  });
}

/**
 * The hash tag of `key` as Redis Cluster computes it: the text between the first `{` and the
 * first `}` after it, when not empty; `undefined` when the key has none (its whole name is hashed).
 * Keys with the same tag are in the same slot, so one script, MULTI or pipeline may use them together.
 *
 * @example hashTag('{acg}:exe:exe_1') // 'acg'
 * @example hashTag('acg:liq:{base}:meta') // 'base'
 * @example hashTag('acg:{}:x') // undefined
 */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/**
 * Opens an ioredis connection. Keys are never prefixed by ioredis itself: every module builds
 * its keys with {@link RedisKeys}, so Lua scripts and BullMQ see the same names.
 *
 * Both kinds reconnect forever ({@link reconnectDelay}) and queue commands while reconnecting
 * (`enableOfflineQueue`). A request connection bounds each command's wait: it fails after 2
 * reconnect attempts (about 150 ms when Redis refuses connections) or {@link COMMAND_TIMEOUT_MS}
 * without a reply, with an error `isRedisUnavailable` recognizes, so callers answer 503
 * instead of hanging; and while Redis does not answer its health PING (frozen, 1.5 s), every
 * command on it fails at once (`failFastWhileUnanswered`, standalone connections). A BullMQ connection (`forBullmq`) waits as long as it takes
 * (`maxRetriesPerRequest: null`, no command timeout: blocking commands wait by design).
 *
 * With `clusterNodes` the connection is an ioredis `Cluster` (the same per-command bounds apply to
 * each node connection; a command sent while no node is known waits in the cluster's offline
 * queue until the cluster answers). It is returned typed as `Redis`: both share the command
 * interface (commands, `defineCommand`, `multi`, `pipeline`, `duplicate`, `subscribe`), and every
 * module uses only that (`redis.isCluster` tells them apart). On a cluster every key one command, script, MULTI or pipeline names must
 * hash to one slot: the deployment's key prefix carries a hash tag (`{acg}:`; {@link RedisKeys}).
 *
 * @example
 * const redis = connectRedis({ url: 'redis://127.0.0.1:6379', name: 'gateway' })
 * const cluster = connectRedis({ url: 'redis://:secret@x', clusterNodes: ['10.0.0.1:7000'], name: 'gateway' })
 */
export function connectRedis(opts: ConnectRedisOptions): Redis {
  const perCommand: Partial<RedisOptions> = opts.forBullmq ? { maxRetriesPerRequest: null } : { maxRetriesPerRequest: 2, commandTimeout: COMMAND_TIMEOUT_MS };
  const autoPipelining = opts.autoPipelining === true && !opts.forBullmq;
  if (opts.clusterNodes && opts.clusterNodes.length > 0) {
    const url = new URL(opts.url);
    const options: ClusterOptions = {
      enableReadyCheck: true,
      enableOfflineQueue: true,
      clusterRetryStrategy: reconnectDelay,
      // follow a failover or a resharding promptly (defaults are 100 ms and retry without end)
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      enableAutoPipelining: autoPipelining,
      redisOptions: {
        connectionName: opts.name,
        enableReadyCheck: true,
        ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
        ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
        ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
        ...perCommand,
      },
    };
    const cluster = new Cluster(parseClusterNodes(opts.clusterNodes), options);
    cluster.on('error', () => undefined);
    return cluster as unknown as Redis;
  }
  const options: RedisOptions = {
    connectionName: opts.name,
    lazyConnect: false,
    enableReadyCheck: true,
    enableOfflineQueue: true,
    retryStrategy: reconnectDelay,
    enableAutoPipelining: autoPipelining,
    ...perCommand,
  };
  const redis = new Redis(opts.url, options);
  // an outage is reported by the commands that fail; without a listener ioredis prints every reconnect error
  redis.on('error', () => undefined);
  // a frozen Redis (no replies, socket open): fail at once instead of queueing (docs/operating.md "Redis outage tolerance")
  if (!opts.forBullmq) failFastWhileUnanswered(redis);
  return redis;
}

/**
 * Key naming: every key of one deployment starts with `prefix`. This class names the keys no one
 * domain owns (executions, latency samples, probes, providers, the BullMQ prefix); each domain
 * package names its own from `prefix` in its `src/commands/keys.ts` (e.g. `accountKeys` of
 * @acg/accounts, `paymentKeys` of @acg/payments), as its Lua scripts live in `src/commands/lua`.
 * Every key of one deployment starts with `prefix` (default `acg:`), so a test run
 * can use its own prefix on a shared Redis and never touch another's keys.
 *
 * On a Redis Cluster the prefix carries a hash tag (REDIS_KEY_PREFIX, default `{acg}:` there;
 * docs/operating.md): the first `{...}` of a key decides its slot, so every key of the deployment,
 * BullMQ's included, is in one slot, and every multi-key script, MULTI and pipeline is legal. The
 * inner tags below (`liq:{chain}`, `{prov}`, `{pl}`) are then inert (only the first tag counts).
 */
export class RedisKeys {
  constructor(readonly prefix = 'acg:') {}
  /** An execution record (`exe_...`). */
  execution(id: string): string {
    return `${this.prefix}exe:${id}`;
  }
  /** Latency samples of a capability (a capped list, milliseconds). */
  latency(capabilityId: string): string {
    return `${this.prefix}lat:${capabilityId}`;
  }
  /**
   * Latency samples of one series (a capability id, or `wallet_monitor.delivery`) in one minute
   * (a capped list of `<ms>:<ok>`, expiring; `LatencySeries`). `minute` is unix ms / 60,000, floored.
   */
  latencyMinute(series: string, minute: number): string {
    return `${this.prefix}latm:${series}:${minute}`;
  }
  /** Probe records of capabilities (hash: capability id -> JSON ProbeRecord). */
  probes(): string {
    return `${this.prefix}probes`;
  }
  /**
   * Keys of third-party providers (`packages/provider-directory`): `{prov}:<part>:...`, e.g. `{prov}:p:<id>`
   * (provider hash), `{prov}:cap:<capability_id>` (owner of an id), `{prov}:nonce:<nonce>`
   * (onboarding challenge). The `{prov}` hash tag keeps them in one Redis Cluster slot, so a
   * registration writes its claims in one MULTI.
   */
  providers(...parts: (string | number)[]): string {
    return `${this.prefix}{prov}:${parts.join(':')}`;
  }
  /** The BullMQ prefix for this deployment's queues. */
  bullPrefix(): string {
    return `${this.prefix}bull`;
  }
}
