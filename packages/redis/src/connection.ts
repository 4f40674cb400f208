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

/** Reconnect delay after the n-th failed attempt, ms: 50, 100, 200... capped at 1 s, never giving up. */
export const reconnectDelay = (attempt: number): number => Math.min(50 * 2 ** Math.max(0, attempt - 1), 1_000);

/** Longest time one command may wait for its reply on a request connection, ms. */
export const COMMAND_TIMEOUT_MS = 5_000;

/**
 * Opens an ioredis connection. Keys are never prefixed by ioredis itself: every module builds
 * its keys with {@link RedisKeys}, so Lua scripts and BullMQ see the same names.
 *
 * Both kinds reconnect forever ({@link reconnectDelay}) and queue commands while reconnecting
 * (`enableOfflineQueue`). A request connection bounds each command's wait: it fails after 2
 * reconnect attempts (about 150 ms when Redis refuses connections) or {@link COMMAND_TIMEOUT_MS}
 * without a reply, with an error `isRedisUnavailable` recognizes, so callers answer 503
 * instead of hanging. A BullMQ connection (`forBullmq`) waits as long as it takes
 * (`maxRetriesPerRequest: null`, no command timeout: blocking commands wait by design).
 */
export function connectRedis(opts: ConnectRedisOptions): Redis {
  const options: RedisOptions = {
    connectionName: opts.name,
    lazyConnect: false,
    enableReadyCheck: true,
    enableOfflineQueue: true,
    retryStrategy: reconnectDelay,
    ...(opts.forBullmq ? { maxRetriesPerRequest: null } : { maxRetriesPerRequest: 2, commandTimeout: COMMAND_TIMEOUT_MS }),
  };
  const redis = new Redis(opts.url, options);
  // an outage is reported by the commands that fail; without a listener ioredis prints every reconnect error
  redis.on('error', () => undefined);
  return redis;
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
  /** Authorizations reserved but not completed (sorted set by last progress, unix ms): the crash-recovery sweep reads it. */
  authorizationsInFlight(): string {
    return `${this.prefix}pay:inflight`;
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
  /** A SIWE nonce issued for sign-in (string, short TTL). */
  siweNonce(nonce: string): string {
    return `${this.prefix}auth:nonce:${nonce}`;
  }
  /** A bearer token, by the sha256 hex of the token (the token itself is never stored). */
  bearerToken(tokenHash: string): string {
    return `${this.prefix}auth:token:${tokenHash}`;
  }
  /** The set of token hashes of a wallet (for revoke-all). */
  walletTokens(address: string): string {
    return `${this.prefix}auth:wallet:${address.toLowerCase()}`;
  }
  /** A metered account (hash: balance, spent, deposited; USDC base units). */
  account(address: string): string {
    return `${this.prefix}acct:${address.toLowerCase()}`;
  }
  /** Usage lines of an account (list, newest first). */
  accountUsage(address: string): string {
    return `${this.prefix}acct:${address.toLowerCase()}:usage`;
  }
  /** Marks a debit or credit reference as applied. */
  accountRef(address: string, ref: string): string {
    return `${this.prefix}acct:${address.toLowerCase()}:ref:${ref}`;
  }
  /** A token bucket of `scope` (e.g. `builder:rpc`) for one client id (e.g. an IP); hash {tokens, ts_us}. */
  rateLimit(scope: string, id: string): string {
    return `${this.prefix}rl:${scope}:${id}`;
  }
  /** Keys of the bundle builder (`apps/builder`): `builder:<part>:<part>...`, e.g. `builder:pool:<block>`. */
  builder(...parts: (string | number)[]): string {
    return `${this.prefix}builder:${parts.join(':')}`;
  }
  /**
   * Keys of the wallet monitor (`packages/wallet-monitor`): `wm:<part>:<part>...`, e.g.
   * `wm:sub:<id>` (subscription hash), `wm:idx:<chain>:<address>` (set of subscription ids),
   * `wm:cursor:<chain>` (last processed block and hash). Addresses are lowercased by the caller.
   */
  walletMonitor(...parts: (string | number)[]): string {
    return `${this.prefix}wm:${parts.join(':')}`;
  }
  /**
   * A key of the liquidation index of `chain` (hash, set or sorted set named by `part`, e.g.
   * `meta`, `pos`, `hf`, `opp:aave_v3`). The `{chain}` hash tag keeps one chain's index in one
   * Redis Cluster slot, so the `liquidation_search` script may read all of it atomically.
   */
  liquidationIndex(chain: string, part: string): string {
    return `${this.prefix}liq:{${chain}}:${part}`;
  }
  /** The BullMQ prefix for this deployment's queues. */
  bullPrefix(): string {
    return `${this.prefix}bull`;
  }
}
