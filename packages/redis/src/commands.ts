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
