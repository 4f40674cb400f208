import { Command, type Redis } from 'ioredis';

/**
 * How long a health PING may go unanswered before Redis counts as unavailable, ms. A Redis that is
 * frozen (SIGSTOP, a stalled VM, a hung disk under `appendfsync always`) keeps its TCP connections
 * open and accepts every command into its socket buffer without answering; only the lack of
 * replies tells.
 */
export const UNANSWERED_AFTER_MS = 1_500;

/** How often a request connection sends its health PING, ms (one at a time: never a backlog of them). */
export const HEALTH_PING_EVERY_MS = 500;

/** Thrown at once by a command sent while Redis counts as unavailable ({@link failFastWhileUnanswered}). */
export class RedisUnanswered extends Error {
  override name = 'RedisUnanswered';
  constructor(ms: number) {
    super(`Redis unavailable: no answer to PING for ${ms} ms`);
  }
}

const HEALTH = new WeakMap<object, RedisHealth>();

/**
 * The live health of a connection made by `connectRedis` (standalone request connections), or
 * undefined for one without the fail-fast check (BullMQ, a Cluster, a connection made elsewhere).
 */
export function redisHealth(redis: object): RedisHealth | undefined {
  return HEALTH.get(redis);
}

/** What {@link failFastWhileUnanswered} reports. */
export interface RedisHealth {
  /** True while Redis counts as unavailable: commands fail at once with {@link RedisUnanswered}. */
  readonly down: boolean;
}

/**
 * Makes a request connection fail fast while Redis does not answer, instead of letting every
 * command wait for its own timeout and pile up in Redis's socket buffer.
 *
 * A health PING goes out every {@link HEALTH_PING_EVERY_MS} (never two at a time). Once one has
 * gone unanswered for {@link UNANSWERED_AFTER_MS} (or failed as unreachable), Redis counts as
 * down: every command sent on this connection then rejects at once with {@link RedisUnanswered}
 * (`isRedisUnavailable` recognizes it, so callers answer 503 with `Retry-After`, or retry a store
 * through the outage with `retryWhileRedisUnavailable`), and nothing more is written to the frozen
 * socket: when Redis resumes it executes only the few commands sent before the trip, not a
 * backlog of everything that arrived meanwhile (a rate limiter's increments would otherwise all
 * land at once: a burst of 429s). The first PING answered again closes it; the next PING is at
 * most {@link HEALTH_PING_EVERY_MS} after Redis is back.
 *
 * Only a ready connection fails fast: while it reconnects (a restarted Redis) ioredis's handshake
 * goes through and commands wait in the offline queue, bounded by `maxRetriesPerRequest`.
 * Commands already in flight when Redis froze keep their own `commandTimeout`. The check runs after
 * node's poll phase (`setImmediate`), so a busy event loop is not taken for a silent Redis. The
 * timer is unref'd and stops when the connection ends. Standalone connections only (a Cluster's
 * nodes are followed by ioredis's own cluster handling).
 *
 * @returns The live health of the connection (`down`).
 */
export function failFastWhileUnanswered(redis: Redis, opts: { unansweredAfterMs?: number; pingEveryMs?: number } = {}): RedisHealth {
  const unansweredAfterMs = opts.unansweredAfterMs ?? UNANSWERED_AFTER_MS;
  const health = { down: false };
  HEALTH.set(redis, health);
  const send = redis.sendCommand.bind(redis) as (command: Command, stream?: unknown) => unknown;
  const probes = new WeakSet<Command>();
  redis.sendCommand = ((command: Command, stream?: unknown) => {
    // only on an open, ready connection: while it (re)connects, ioredis's own handshake (INFO ready
    // check, CLIENT SETNAME) must go through, and commands wait in the offline queue, bounded by maxRetriesPerRequest
    if (health.down && redis.status === 'ready' && !probes.has(command)) {
      command.reject(new RedisUnanswered(unansweredAfterMs));
      return command.promise;
    }
    return send(command, stream);
  }) as Redis['sendCommand'];

  let probe: { sentAt: number } | undefined;
  const tick = () => {
    if (probe) {
      const pending = probe;
      if (Date.now() - pending.sentAt < unansweredAfterMs) return;
      // after the poll phase: a PONG already in the socket has been read by now
      setImmediate(() => {
        if (probe === pending) health.down = true;
      });
      return;
    }
    const current = { sentAt: Date.now() };
    probe = current;
    const ping = new Command('ping', []);
    probes.add(ping);
    send(ping);
    ping.promise.then(
      () => {
        if (probe === current) probe = undefined;
        health.down = false;
      },
      () => {
        if (probe === current) probe = undefined;
        // refused, reset or timed out: unreachable (a PING fails for no other reason)
        health.down = true;
      },
    );
  };
  const timer = setInterval(tick, opts.pingEveryMs ?? HEALTH_PING_EVERY_MS);
  timer.unref();
  redis.once('end', () => clearInterval(timer));
  return health;
}
