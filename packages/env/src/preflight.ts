import { Redis } from 'ioredis';
import net from 'node:net';
import { envProblem } from './env.js';

/** A port an entry is about to listen on, named by its variable. */
export type PortCheck = { name: string; port: number; host?: string };

/**
 * Tries to listen on each port (then closes it) and reports those that cannot be bound, e.g.
 * `GATEWAY_PORT=8080: port already in use`. Port 0 (OS-chosen) is never checked.
 *
 * @param checks - Variable name, port, host (default 127.0.0.1).
 * @returns One problem line per port that cannot be bound (EADDRINUSE: "port already in use";
 *   EACCES: "permission denied"; otherwise the error code).
 */
export async function portProblems(checks: readonly PortCheck[]): Promise<string[]> {
  const results = await Promise.all(
    checks.map(async ({ name, port, host = '127.0.0.1' }) => {
      if (port === 0) return undefined;
      const code = await bindError(port, host);
      if (code === undefined) return undefined;
      const reason = code === 'EADDRINUSE' ? 'port already in use' : code === 'EACCES' ? 'permission denied' : `cannot listen on ${host} (${code})`;
      return envProblem(name, String(port), reason);
    }),
  );
  return results.filter((p): p is string => p !== undefined);
}

function bindError(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen(port, host, () => server.close(() => resolve(undefined)));
  });
}

/**
 * Connects once to `url` and sends `PING`, with no retry loop (ioredis's retries are for running
 * services; at startup one clear line is better), e.g.
 * `REDIS_URL=redis://127.0.0.1:1: cannot connect (ECONNREFUSED)`.
 *
 * @param name - Variable name for the message, e.g. `REDIS_URL`.
 * @param url - Redis URL.
 * @param timeoutMs - Connect and answer budget in milliseconds (default 3000).
 * @returns A problem line, or `undefined` when the server answered `PONG`.
 */
export async function redisProblem(name: string, url: string, timeoutMs = 3000): Promise<string | undefined> {
  const answer = await once(new Redis(url, oneShotOptions(timeoutMs)), timeoutMs, (client) => client.ping());
  return 'error' in answer ? envProblem(name, url, `cannot connect (${answer.error})`) : undefined;
}

/**
 * Asks each Redis Cluster startup node once for `CLUSTER INFO` (no retry loop, like
 * {@link redisProblem}); the cluster is usable when at least one node reports `cluster_state:ok`.
 * `url`'s user, password and TLS (`rediss://`) apply to every node, as in `connectRedis`.
 *
 * @param name - Variable name for the message, e.g. `REDIS_CLUSTER_NODES`.
 * @param nodes - `host:port` entries (REDIS_CLUSTER_NODES, parsed by `envHostPorts`).
 * @param url - REDIS_URL for credentials and TLS, if any.
 * @param timeoutMs - Connect and answer budget per node in milliseconds (default 3000).
 * @returns A problem line naming each node's answer, e.g.
 *   `REDIS_CLUSTER_NODES=127.0.0.1:7000: no node reports cluster_state:ok (127.0.0.1:7000: cannot connect (ECONNREFUSED))`,
 *   or `undefined`.
 */
export async function redisClusterProblem(name: string, nodes: readonly string[], url?: string, timeoutMs = 3000): Promise<string | undefined> {
  const auth = url ? new URL(url) : undefined;
  const answers = await Promise.all(
    nodes.map(async (node) => {
      const sep = node.lastIndexOf(':');
      const host = node.slice(0, sep).replace(/^\[|\]$/g, '');
      const client = new Redis({
        ...oneShotOptions(timeoutMs),
        host,
        port: Number(node.slice(sep + 1)),
        ...(auth?.username ? { username: decodeURIComponent(auth.username) } : {}),
        ...(auth?.password ? { password: decodeURIComponent(auth.password) } : {}),
        ...(auth?.protocol === 'rediss:' ? { tls: {} } : {}),
      });
      const answer = await once(client, timeoutMs, (c) => c.cluster('INFO') as Promise<string>);
      if ('error' in answer) return `${node}: ${/cluster support disabled/i.test(answer.error) ? 'not a cluster node' : `cannot connect (${answer.error})`}`;
      return /cluster_state:ok/.test(answer.value) ? undefined : `${node}: ${/cluster_state:\w+/.exec(answer.value)?.[0] ?? 'no cluster_state'}`;
    }),
  );
  if (answers.some((a) => a === undefined)) return undefined;
  return envProblem(name, nodes.join(','), `no node reports cluster_state:ok (${answers.join('; ')})`);
}

/**
 * The Redis preflight of a standalone entry: {@link redisClusterProblem} on REDIS_CLUSTER_NODES
 * when `clusterNodes` is set, else {@link redisProblem} on REDIS_URL.
 */
export function redisTargetProblem(target: { redisUrl: string; redisClusterNodes?: readonly string[] }, timeoutMs = 3000): Promise<string | undefined> {
  return target.redisClusterNodes?.length
    ? redisClusterProblem('REDIS_CLUSTER_NODES', target.redisClusterNodes, target.redisUrl, timeoutMs)
    : redisProblem('REDIS_URL', target.redisUrl, timeoutMs);
}

function oneShotOptions(timeoutMs: number) {
  return {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    enableReadyCheck: false,
  };
}

/** Connects `client`, runs `fn` once within `timeoutMs`, disconnects; the value or the error's code (ECONNREFUSED, ETIMEDOUT, the reply's first word...). */
async function once<T>(client: Redis, timeoutMs: number, fn: (client: Redis) => Promise<T>): Promise<{ value: T } | { error: string }> {
  let socketError: NodeJS.ErrnoException | undefined;
  client.on('error', (err: NodeJS.ErrnoException) => {
    socketError ??= err; // the cause (ECONNREFUSED, ENOTFOUND, ...); reported below, once
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), timeoutMs);
  });
  try {
    const value = await Promise.race([
      (async () => {
        await client.connect();
        return fn(client);
      })(),
      deadline,
    ]);
    return { value };
  } catch (err) {
    deadline.catch(() => {});
    const e = socketError ?? (err as NodeJS.ErrnoException);
    if (!socketError && /cluster support disabled/i.test(e.message)) return { error: e.message };
    return { error: e.code ?? (/^[A-Z]+\b/.exec(e.message)?.[0] || e.message) };
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
