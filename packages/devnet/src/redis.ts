import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import type { Cluster, Redis as RedisClient } from 'ioredis';
import os from 'node:os';
import path from 'node:path';
import { freePort, isPortFree, sleep } from './ports.js';
import { findExecutable, lastLines, spawnManaged, type ManagedProcess } from './processes.js';

/** A Redis to use, found or spawned by {@link resolveRedis}. */
export type RedisHandle = {
  /** Connection URL, e.g. `redis://127.0.0.1:6379`. */
  url: string;
  /** `true` when {@link resolveRedis} started this Redis (a private `redis-server`). */
  spawned: boolean;
  /** Stops the Redis if it was spawned here (and removes its temp dir); a no-op otherwise. Idempotent. */
  stop(): Promise<void>;
};

/** Options of {@link resolveRedis}. */
export type ResolveRedisOptions = {
  /** Use this Redis as is (no probe). Wins over everything else. */
  url?: string;
  /**
   * `true`: always spawn a private `redis-server` (ignores `REDIS_URL` and 127.0.0.1:6379; `url` still wins).
   * For tests that want isolation. Default false.
   */
  preferPrivate?: boolean;
  /** Receives one line saying which Redis was chosen and why. */
  log?: (msg: string) => void;
  /**
   * Persistence of a spawned server (a found one is used as it is): `always` (default; AOF with
   * `appendfsync always`, every acknowledged write on disk, docs/durability.md), `everysec` (AOF
   * fsynced once a second: a machine crash loses up to a second of writes; the bench's comparison
   * and the tests of the gateway's durability check), `none` (no AOF: a restart loses everything).
   */
  persistence?: RedisPersistence;
  /** `host:port` of a Redis a spawned server replicates (`--replicaof`): a private replica, e.g. for `WAIT` tests. */
  replicaOf?: string;
};

/** How a spawned private Redis persists its writes (see {@link ResolveRedisOptions.persistence}). */
export type RedisPersistence = 'always' | 'everysec' | 'none';

/** The shared local Redis probed before spawning one. */
export const DEFAULT_LOCAL_REDIS = { host: '127.0.0.1', port: 6379 } as const;

const PROBE_TIMEOUT_MS = 300;
const READY_ATTEMPTS = 200;
const READY_INTERVAL_MS = 50;

/**
 * Finds a Redis to use (docs/architecture.md "Shape", `REDIS_URL`), in this order:
 * 1. `opts.url`, else env `REDIS_URL` (not probed; unless `preferPrivate`);
 * 2. 127.0.0.1:6379 if it answers `PING` with `+PONG` within ~300 ms (unless `preferPrivate`);
 * 3. a private `redis-server` on a free port of 127.0.0.1 (`--save "" --appendonly yes
 *    --appendfsync always --maxmemory-policy noeviction`, data dir in a temp dir of its own; other
 *    settings with `opts.persistence`), once it answers `PING`.
 *
 * A spawned server dies with this process (see `spawnManaged`). Never flushes or writes anything.
 *
 * @param opts - See {@link ResolveRedisOptions}.
 * @returns A {@link RedisHandle}; `stop()` only stops what was spawned here.
 * @throws {Error} If a server must be spawned and no `redis-server` is on PATH (nor in /usr/sbin, /usr/bin,
 *   /usr/local/bin, /opt/homebrew/bin): the message names the install command and the `REDIS_URL`
 *   alternative. Also if the spawned server exits or does not answer (message carries its log tail).
 *
 * @example
 * const redis = await resolveRedis({ preferPrivate: true }) // redis.url === 'redis://127.0.0.1:<port>'
 * await redis.stop()
 */
export async function resolveRedis(opts: ResolveRedisOptions = {}): Promise<RedisHandle> {
  const log = opts.log ?? (() => {});
  const noop = async () => {};

  if (opts.url) {
    log(`redis: using ${redact(opts.url)} (explicit)`);
    return { url: opts.url, spawned: false, stop: noop };
  }
  if (!opts.preferPrivate) {
    const envUrl = process.env.REDIS_URL;
    if (envUrl) {
      log(`redis: using ${redact(envUrl)} (REDIS_URL)`);
      return { url: envUrl, spawned: false, stop: noop };
    }
    const { host, port } = DEFAULT_LOCAL_REDIS;
    if (await pingRedis(host, port, PROBE_TIMEOUT_MS)) {
      const url = `redis://${host}:${port}`;
      log(`redis: using ${url} (answered PING)`);
      return { url, spawned: false, stop: noop };
    }
  }
  const persistence = opts.persistence ?? 'always';
  const handle = await spawnRedis(persistence, opts.replicaOf);
  log(`redis: spawned private redis-server at ${handle.url} (${persistenceArgs(persistence).slice(1).join(' ')})`);
  return handle;
}

/**
 * Sends `PING` over a raw TCP connection and waits for `+PONG` (RESP2 inline command; no client library).
 *
 * @param host - Host, e.g. `127.0.0.1`.
 * @param port - TCP port.
 * @param timeoutMs - Overall budget in milliseconds (connect + answer).
 * @returns `true` on `+PONG`; `false` on timeout, refusal, or any other answer (e.g. `-NOAUTH`).
 */
export function pingRedis(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    let answer = '';
    const socket = net.connect({ host, port });
    const finish = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) finish(answer.startsWith('+PONG'));
    });
    socket.once('error', () => finish(false));
    socket.once('close', () => finish(false));
  });
}

/**
 * Locates `redis-server` on PATH or in the usual system directories.
 *
 * @returns Absolute path, or `null` when not installed.
 */
export function findRedisServer(): string | null {
  return findExecutable('redis-server', ['/usr/sbin', '/usr/bin', '/usr/local/bin', '/opt/homebrew/bin']);
}

/** The error thrown when a private Redis is needed and `redis-server` is not installed. */
export function redisNotInstalledMessage(): string {
  const install =
    process.platform === 'darwin' ? '`brew install redis`' : '`sudo apt-get install -y redis-server` (Debian/Ubuntu; `brew install redis` on macOS)';
  return (
    'redis-server not found on PATH (nor in /usr/sbin, /usr/bin, /usr/local/bin, /opt/homebrew/bin) and no Redis answers ' +
    `on 127.0.0.1:6379. Install it with ${install}, or point REDIS_URL at an existing Redis ` +
    '(e.g. REDIS_URL=redis://127.0.0.1:6379).'
  );
}

async function spawnRedis(persistence: RedisPersistence, replicaOf: string | undefined): Promise<RedisHandle> {
  const binary = findRedisServer();
  if (!binary) throw new Error(redisNotInstalledMessage());

  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    if (!(await isPortFree(port))) continue;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'acg-redis-'));
    const replica = replicaOf ? ['--replicaof', ...replicaOf.split(':')] : [];
    const proc = spawnManaged(binary, ['--port', String(port), '--bind', '127.0.0.1', ...privateServerArgs(dir, persistence), ...replica], {
      name: `redis:${port}`,
      cwd: dir,
    });
    const cleanup = async () => {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      for (let i = 0; i < READY_ATTEMPTS; i++) {
        if (proc.hasExited()) {
          const { code, signal } = await proc.exited;
          const tail = proc.outputTail();
          const err = new Error(`redis-server exited during startup (code ${code}, signal ${signal}) on port ${port}:\n${lastLines(tail)}`);
          if (/address already in use/i.test(tail)) throw Object.assign(err, { retry: true });
          throw err;
        }
        if ((await pingRedis('127.0.0.1', port, 500)) && !proc.hasExited()) {
          let stopping: Promise<void> | undefined;
          return { url: `redis://127.0.0.1:${port}`, spawned: true, stop: () => (stopping ??= cleanup()) };
        }
        await sleep(READY_INTERVAL_MS);
      }
      throw new Error(
        `redis-server on port ${port} did not answer PING after ${(READY_ATTEMPTS * READY_INTERVAL_MS) / 1000} s:\n${lastLines(proc.outputTail())}`,
      );
    } catch (err) {
      await cleanup();
      lastError = err;
      if (!(err instanceof Error && 'retry' in err)) throw err;
    }
  }
  throw lastError ?? new Error('redis-server: no free port found');
}

/** A private local Redis Cluster started by {@link startRedisCluster}. */
export type RedisClusterHandle = {
  /** Startup nodes, `127.0.0.1:<port>` each: the value of REDIS_CLUSTER_NODES (joined with `,`). */
  nodes: string[];
  /** `redis://127.0.0.1:<first node's port>`: a REDIS_URL for code that wants one (no password, no TLS). */
  url: string;
  /** Stops every node and removes the temp dir (configs, logs). Idempotent; never throws. */
  stop(): Promise<void>;
};

/** Options of {@link startRedisCluster}. */
export type StartRedisClusterOptions = {
  /** Master nodes, each owning a third (for 3) of the 16384 slots; at least 3 (`redis-cli --cluster create`'s minimum). Default 3. */
  masters?: number;
};

/**
 * Starts a private Redis Cluster on 127.0.0.1 for tests (docs/operating.md, REDIS_CLUSTER_NODES):
 * `masters` `redis-server --cluster-enabled yes` processes on free ports (and their cluster bus
 * ports, port + 10000; `--save '' --appendonly yes --appendfsync always --maxmemory-policy noeviction`,
 * configs and append-only files in a temp dir),
 * joined by `redis-cli --cluster create ... --cluster-replicas 0 --cluster-yes`. Resolves once
 * every node reports `cluster_state:ok` with all 16384 slots assigned. The nodes die with this
 * process (`spawnManaged`). Needs `redis-cli` besides `redis-server` (Debian: redis-tools, a
 * dependency of redis-server).
 *
 * @returns A {@link RedisClusterHandle}; `stop()` stops the nodes and removes their files.
 * @throws {Error} If `redis-server` or `redis-cli` is missing, a node does not start, or the
 *   cluster is not `ok` within 30 s (messages carry the tail of the output).
 *
 * @example
 * const cluster = await startRedisCluster() // cluster.nodes: ['127.0.0.1:41001', ...]
 * const redis = connectRedis({ url: cluster.url, clusterNodes: cluster.nodes }) // @acg/redis
 * await cluster.stop()
 */
export async function startRedisCluster(opts: StartRedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const masters = opts.masters ?? 3;
  if (masters < 3) throw new Error('startRedisCluster: a Redis Cluster needs at least 3 masters');
  const server = findRedisServer();
  if (!server) throw new Error(redisNotInstalledMessage());
  const cli = findExecutable('redis-cli', ['/usr/sbin', '/usr/bin', '/usr/local/bin', '/opt/homebrew/bin']);
  if (!cli) throw new Error('redis-cli not found on PATH (Debian/Ubuntu: `sudo apt-get install -y redis-tools`, which redis-server pulls in)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'acg-redis-cluster-'));
  const procs: ManagedProcess[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.allSettled(procs.map((p) => p.stop()));
      rmSync(dir, { recursive: true, force: true });
    })());
  try {
    const ports: number[] = [];
    for (let i = 0; i < masters; i++) {
      const { proc, port } = await spawnClusterNode(server, dir);
      procs.push(proc);
      ports.push(port);
    }
    const nodes = ports.map((p) => `127.0.0.1:${p}`);
    await run(cli, ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], 30_000);
    for (let i = 0; ; i++) {
      const infos = await Promise.all(ports.map((p) => run(cli, ['-h', '127.0.0.1', '-p', String(p), 'cluster', 'info'], 5_000).catch(() => '')));
      if (infos.every((info) => /cluster_state:ok/.test(info) && /cluster_slots_assigned:16384/.test(info))) break;
      if (i >= 300) throw new Error(`redis cluster ${nodes.join(',')} not ok after 30 s:\n${infos.map((t) => lastLines(t, 3)).join('\n')}`);
      await sleep(100);
    }
    return { nodes, url: `redis://${nodes[0]}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One `redis-server --cluster-enabled yes` on a free port whose bus port (port + 10000) is free too, once it answers PING. */
async function spawnClusterNode(binary: string, dir: string): Promise<{ proc: ManagedProcess; port: number }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    // the cluster bus listens on port + 10000 (Redis's default, so Redis 6 works too): both must be free
    let port = 0;
    for (let i = 0; i < 50 && port === 0; i++) {
      const p = await freePort();
      if (p + 10_000 <= 65_535 && (await isPortFree(p + 10_000))) port = p;
    }
    if (port === 0) continue;
    const proc = spawnManaged(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '5000',
        // one dir per node: each writes its own append-only file
        ...privateServerArgs(nodeDir(dir, port), 'always'),
      ],
      { name: `redis-cluster:${port}`, cwd: dir },
    );
    try {
      for (let i = 0; i < READY_ATTEMPTS; i++) {
        if (proc.hasExited()) {
          const { code, signal } = await proc.exited;
          const tail = proc.outputTail();
          const err = new Error(`redis-server (cluster node) exited during startup (code ${code}, signal ${signal}) on port ${port}:\n${lastLines(tail)}`);
          if (/address already in use/i.test(tail)) throw Object.assign(err, { retry: true });
          throw err;
        }
        if (await pingRedis('127.0.0.1', port, 500)) return { proc, port };
        await sleep(READY_INTERVAL_MS);
      }
      throw new Error(`redis-server (cluster node) on port ${port} did not answer PING:\n${lastLines(proc.outputTail())}`);
    } catch (err) {
      await proc.stop();
      lastError = err;
      if (!(err instanceof Error && 'retry' in err)) throw err;
    }
  }
  throw lastError ?? new Error('redis-server (cluster node): no free port found');
}

/** Runs `command` to completion; resolves with its stdout, rejects with its output on a non-zero exit or after `timeoutMs`. */
function run(command: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${path.basename(command)} ${args.join(' ')} failed: ${err.message}\n${lastLines(`${stdout}\n${stderr}`)}`));
      else resolve(stdout);
    });
  });
}

/** Hides a password in a Redis URL for logs. */
function redact(url: string): string {
  return url.replace(/\/\/([^@/]*):([^@/]*)@/, '//$1:***@');
}

/** `prefix` as a Redis glob that matches it literally (`*`, `?`, `[`, `]` and `\` escaped). */
export function literalGlob(prefix: string): string {
  return prefix.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Deletes every key that starts with `prefix` in the Redis at `url` (SCAN `MATCH <prefix>*`, then
 * UNLINK in batches), and only those: never FLUSHDB, so keys of other prefixes stay. `npm start`
 * calls it on Ctrl-C for its own per-run prefix (BullMQ queues included: they live under it).
 * With `opts.clusterNodes` (REDIS_CLUSTER_NODES) the Redis is a cluster: every master is scanned,
 * and each key it holds is unlinked there (`url` gives only the user and password).
 * Returns how many keys it removed. An empty prefix is refused (it would match everything).
 */
export async function deleteKeysWithPrefix(url: string, prefix: string, opts: { clusterNodes?: readonly string[] } = {}): Promise<number> {
  if (!prefix) throw new Error('refusing to delete keys with an empty prefix');
  const client = await connectRedisTarget(url, opts, { failFast: true });
  try {
    if (opts.clusterNodes?.length) {
      const cluster = client as unknown as Cluster;
      // keys of different slots may not share one command, even on one node: one UNLINK per key, pipelined
      const counts = await Promise.all(
        cluster.nodes('master').map((node) => unlinkMatching(node, prefix, (keys) => node.pipeline(keys.map((k) => ['unlink', k])).exec())),
      );
      return counts.reduce((a, b) => a + b, 0);
    }
    return await unlinkMatching(client, prefix, (keys) => client.unlink(...keys));
  } finally {
    client.disconnect();
  }
}

/**
 * One connected ioredis client for `url`, or, with `opts.clusterNodes` (REDIS_CLUSTER_NODES
 * `host:port` entries, `[v6]:port` for IPv6), a Cluster of those nodes with the user and password of
 * `url`; `isCluster` tells which. One failed retry per command (`maxRetriesPerRequest: 1`), and
 * connection errors are swallowed (the command that meets them rejects). With `failFast`, a lost
 * connection is not waited for: no offline queue (single node), no cluster reconnect.
 * Used by {@link deleteKeysWithPrefix} and the dev-run registry (`devRuns.ts`).
 */
export async function connectRedisTarget(url: string, opts: { clusterNodes?: readonly string[] }, tuning: { failFast?: boolean } = {}): Promise<RedisClient> {
  const { Cluster, Redis } = await import('ioredis');
  if (opts.clusterNodes?.length) {
    const auth = new URL(url);
    const cluster = new Cluster(
      opts.clusterNodes.map((n) => ({ host: n.slice(0, n.lastIndexOf(':')).replace(/^\[|\]$/g, ''), port: Number(n.slice(n.lastIndexOf(':') + 1)) })),
      {
        lazyConnect: true,
        ...(tuning.failFast ? { clusterRetryStrategy: () => null } : {}),
        redisOptions: {
          maxRetriesPerRequest: 1,
          username: decodeURIComponent(auth.username) || undefined,
          password: decodeURIComponent(auth.password) || undefined,
        },
      },
    );
    cluster.on('error', () => undefined);
    await cluster.connect();
    return cluster as unknown as RedisClient;
  }
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, ...(tuning.failFast ? { enableOfflineQueue: false } : {}) });
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

/** SCANs `node` for keys starting with `prefix` and hands each batch to `unlink`; the number of keys removed. */
async function unlinkMatching(node: RedisClient, prefix: string, unlink: (keys: string[]) => Promise<unknown>): Promise<number> {
  let removed = 0;
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', `${literalGlob(prefix)}*`, 'COUNT', 1000);
    cursor = next;
    const mine = keys.filter((k) => k.startsWith(prefix));
    if (mine.length === 0) continue;
    const r = await unlink(mine);
    removed += typeof r === 'number' ? r : ((r as [Error | null, number][] | null) ?? []).reduce((n, [err, v]) => n + (err ? 0 : Number(v)), 0);
  } while (cursor !== '0');
  return removed;
}

/**
 * redis-server arguments of a private server in `dir` (a dir of its own: its append-only file
 * lives there and goes with it): no RDB snapshots, the AOF as `persistence` says, no eviction
 * (BullMQ needs noeviction), foreground, log to stdout.
 */
function privateServerArgs(dir: string, persistence: RedisPersistence): string[] {
  return ['--save', '', ...persistenceArgs(persistence), '--maxmemory-policy', 'noeviction', '--dir', dir, '--daemonize', 'no', '--logfile', ''];
}

/** The AOF arguments of `persistence`: `--appendonly yes --appendfsync always|everysec`, or `--appendonly no`. */
function persistenceArgs(persistence: RedisPersistence): string[] {
  return persistence === 'none' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', persistence];
}

/** A cluster node's own dir under the cluster's temp dir (created). */
function nodeDir(dir: string, port: number): string {
  const own = path.join(dir, `node-${port}`);
  mkdirSync(own, { recursive: true });
  return own;
}
