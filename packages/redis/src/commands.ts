import type { Redis } from 'ioredis';
import { luaSource, withScripts, COMMON_SCRIPTS as SCRIPTS } from './scripts.js';

/**
 * The common Lua commands every domain may use (leases and a compare-and-delete), in `./lua`, each
 * through a typed wrapper with named arguments. A domain's own scripts live in that domain's
 * package (`src/commands/`), loaded with the same `scriptSet` / `withScripts`.
 */

/** `take_lease.lua`: takes or extends a lease for `holder`; true when the caller holds it. */
export async function takeLease(redis: Redis, p: { leaseKey: string; holder: string; leaseMs: number }): Promise<boolean> {
  return (await withScripts(redis, SCRIPTS).take_lease(p.leaseKey, p.holder, p.leaseMs)) === 1;
}

/** `release_lease.lua`: releases a lease taken with {@link takeLease}, only by its holder; true when released. */
export async function releaseLease(redis: Redis, p: { leaseKey: string; holder: string }): Promise<boolean> {
  return (await withScripts(redis, SCRIPTS).release_lease(p.leaseKey, p.holder)) === 1;
}

/** `hdel_if_equal.lua`: deletes `fields` of a hash only while `field` still equals `expected`; true when deleted. */
export async function deleteFieldsIfEqual(redis: Redis, p: { key: string; field: string; expected: string; fields: readonly string[] }): Promise<boolean> {
  return (await withScripts(redis, SCRIPTS).hdel_if_equal(p.key, p.field, p.expected, ...p.fields)) === 1;
}

/**
 * The source of `rate_limit_incr.lua`, for rate-limiter-flexible's `customIncrTtlLuaScript` option
 * of `RateLimiterRedis`: the library's own increment contract (KEYS[1]; ARGV[1] points, ARGV[2]
 * seconds; returns {consumed, ms to expiry}), kept out of the AOF and the replicas, so under
 * `appendfsync always` counting a request costs no fsync (docs/durability.md "What is not
 * fsynced"). The library defines its increment as one command per connection (`rlflxIncr`): every
 * `RateLimiterRedis` on a connection must pass this same script.
 */
export function rateLimitIncrScript(): string {
  return luaSource(SCRIPTS, 'rate_limit_incr');
}

/**
 * `set_unlogged.lua`: `SET key value PX ttlMs`, kept out of the AOF and the replicas: no fsync of its
 * own under `appendfsync always`, and lost on a restart or failover. Only for markers whose loss
 * fails closed (docs/durability.md "What is not fsynced").
 */
export async function setUnlogged(redis: Redis, p: { key: string; value: string; ttlMs: number }): Promise<void> {
  await withScripts(redis, SCRIPTS).set_unlogged(p.key, p.value, p.ttlMs);
}
