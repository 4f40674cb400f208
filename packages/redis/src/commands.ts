import type { Redis } from 'ioredis';
import { withScripts, COMMON_SCRIPTS as SCRIPTS } from './scripts.js';

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
 * `count_in_window.lua`: counts one event under `key` (a fixed window named by the caller, e.g.
 * `<ip>:<unix second>`, living `windowMs` from its first count). Returns the count including this
 * one and the milliseconds until the window's key expires. The counter is kept out of the AOF and
 * the replicas (a lost count only reopens a window of `windowMs`), so under `appendfsync always`
 * counting costs no fsync of its own (docs/durability.md "What is not fsynced").
 */
export async function countInWindow(redis: Redis, p: { key: string; windowMs: number }): Promise<{ count: number; msLeft: number }> {
  const [count, msLeft] = (await withScripts(redis, SCRIPTS).count_in_window(p.key, p.windowMs)) as [number, number];
  return { count, msLeft };
}

/**
 * `set_unlogged.lua`: `SET key value PX ttlMs`, kept out of the AOF and the replicas: no fsync of its
 * own under `appendfsync always`, and lost on a restart or failover. Only for markers whose loss
 * fails closed (docs/durability.md "What is not fsynced").
 */
export async function setUnlogged(redis: Redis, p: { key: string; value: string; ttlMs: number }): Promise<void> {
  await withScripts(redis, SCRIPTS).set_unlogged(p.key, p.value, p.ttlMs);
}
