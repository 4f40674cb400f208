import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, isPortFree, sleep } from './ports.js';
import { findExecutable, lastLines, spawnManaged } from './processes.js';

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
};

/** The shared local Redis probed before spawning one. */
export const DEFAULT_LOCAL_REDIS = { host: '127.0.0.1', port: 6379 } as const;

const PROBE_TIMEOUT_MS = 300;
const READY_ATTEMPTS = 200;
const READY_INTERVAL_MS = 50;

/**
 * Finds a Redis to use (DESIGN.md 1, `REDIS_URL`), in this order:
 * 1. `opts.url`, else env `REDIS_URL` (not probed; unless `preferPrivate`);
 * 2. 127.0.0.1:6379 if it answers `PING` with `+PONG` within ~300 ms (unless `preferPrivate`);
 * 3. a private `redis-server` on a free port of 127.0.0.1 (`--save "" --appendonly no
 *    --maxmemory-policy noeviction`, data dir in a temp dir), once it answers `PING`.
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
  const handle = await spawnRedis();
  log(`redis: spawned private redis-server at ${handle.url}`);
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

async function spawnRedis(): Promise<RedisHandle> {
  const binary = findRedisServer();
  if (!binary) throw new Error(redisNotInstalledMessage());

  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    if (!(await isPortFree(port))) continue;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'acg-redis-'));
    const proc = spawnManaged(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--maxmemory-policy',
        'noeviction',
        '--dir',
        dir,
        '--daemonize',
        'no',
        '--logfile',
        '',
      ],
      { name: `redis:${port}`, cwd: dir },
    );
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

/** Hides a password in a Redis URL for logs. */
function redact(url: string): string {
  return url.replace(/\/\/([^@/]*):([^@/]*)@/, '//$1:***@');
}
