import { Redis, type RedisOptions } from 'ioredis';

/** Options of {@link connectRedis}. */
export interface ConnectRedisOptions {
  /** `redis://host:port/db` URL. */
  url: string;
  /** Connection name shown by CLIENT LIST, e.g. `gateway`. */
  name?: string;
  /** BullMQ workers need `maxRetriesPerRequest: null` (DESIGN "Known pitfalls"). */
  forBullmq?: boolean;
}

/**
 * Opens an ioredis connection. Keys are never prefixed by ioredis itself: every module builds
 * its keys with {@link RedisKeys}, so Lua scripts and BullMQ see the same names.
 */
export function connectRedis(opts: ConnectRedisOptions): Redis {
  const options: RedisOptions = {
    connectionName: opts.name,
    lazyConnect: false,
    enableReadyCheck: true,
    ...(opts.forBullmq ? { maxRetriesPerRequest: null } : { maxRetriesPerRequest: 3 }),
  };
  return new Redis(opts.url, options);
}

/**
 * Key naming: every key of one deployment starts with `prefix` (default `acg:`), so a test run
 * can use its own prefix on a shared Redis and never touch another's keys.
 */
export class RedisKeys {
  constructor(readonly prefix = 'acg:') {}
  /** An x402 authorization reservation: network, asset, payer, EIP-3009 nonce (all lowercase). */
  authorization(network: string, asset: string, from: string, nonce: string): string {
    return `${this.prefix}pay:auth:${network}:${asset.toLowerCase()}:${from.toLowerCase()}:${nonce.toLowerCase()}`;
  }
  /** A client's Idempotency-Key, scoped by route. */
  idempotency(route: string, key: string): string {
    return `${this.prefix}idem:${route}:${key}`;
  }
  /** An execution record (`exe_...`). */
  execution(id: string): string {
    return `${this.prefix}exe:${id}`;
  }
  /** Refund records by operation id. */
  refund(id: string): string {
    return `${this.prefix}refund:${id}`;
  }
  /** Latency samples of a capability (a capped list, milliseconds). */
  latency(capabilityId: string): string {
    return `${this.prefix}lat:${capabilityId}`;
  }
  /** Probe records of capabilities (hash: capability id -> JSON ProbeRecord). */
  probes(): string {
    return `${this.prefix}probes`;
  }
  /** The BullMQ prefix for this deployment's queues. */
  bullPrefix(): string {
    return `${this.prefix}bull`;
  }
}
