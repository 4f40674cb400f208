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
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    enableReadyCheck: false,
  });
  let socketError: NodeJS.ErrnoException | undefined;
  client.on('error', (err: NodeJS.ErrnoException) => {
    socketError ??= err; // the cause (ECONNREFUSED, ENOTFOUND, ...); reported below, once
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), timeoutMs);
  });
  try {
    await Promise.race([
      (async () => {
        await client.connect();
        await client.ping();
      })(),
      deadline,
    ]);
    return undefined;
  } catch (err) {
    deadline.catch(() => {});
    const e = socketError ?? (err as NodeJS.ErrnoException);
    const code = e.code ?? (/^[A-Z]+\b/.exec(e.message)?.[0] || e.message);
    return envProblem(name, url, `cannot connect (${code})`);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
