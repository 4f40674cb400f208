import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

/**
 * One domain's atomic Redis logic: a folder of Lua files, one per script (`<name>.lua`), and each
 * script's number of KEYS (null: the caller passes numkeys first). Each domain package keeps its
 * own set in `src/commands/lua` (as bullmq keeps its queue's commands in `src/commands`); this
 * package keeps only the common ones ({@link COMMON_SCRIPTS}). Script names are unique across
 * the deployment: every set is defined on the same connections, and a build copies every
 * `commands/lua` folder into one `dist/lua` (tsup.config.ts).
 */
export interface ScriptSet<N extends string = string> {
  /** The folder holding `<name>.lua` for every name (a `file:` URL ending in `/`). */
  readonly dir: URL;
  readonly numberOfKeys: Readonly<Record<N, number | null>>;
}

/**
 * Declares a domain's scripts: `dir` is the folder of its Lua files, usually
 * `new URL('./lua/', import.meta.url)` from the domain's `src/commands/index.ts`.
 *
 * @example
 * const SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), { debit_account: 3, credit_account: 3 });
 * await withScripts(redis, SCRIPTS).debit_account(accountKey, usageKey, refKey, amount, line, 100, 86400);
 */
export function scriptSet<N extends string>(dir: URL, numberOfKeys: Record<N, number | null>): ScriptSet<N> {
  return Object.freeze({ dir, numberOfKeys: Object.freeze({ ...numberOfKeys }) });
}

/** The common scripts of this package (`./lua`): leases (`take_lease`, `release_lease`), `hdel_if_equal`, and the unlogged `rate_limit_incr` (rate-limiter-flexible's increment) and `set_unlogged`. */
export const COMMON_SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), {
  take_lease: 1,
  release_lease: 1,
  hdel_if_equal: 1,
  rate_limit_incr: 1,
  set_unlogged: 1,
});

const sources = new Map<string, string>();

/** The source text of script `name` of `set`. Throws if the file is missing (a packaging error). */
export function luaSource<N extends string>(set: ScriptSet<N>, name: N): string {
  const url = new URL(`${name}.lua`, set.dir);
  let src = sources.get(url.href);
  if (src === undefined) {
    src = readFileSync(fileURLToPath(url), 'utf8');
    sources.set(url.href, src);
  }
  return src;
}

/** A Redis connection with every script of a set defined as a command of the same name. */
export type ScriptedRedis<N extends string = string> = Redis & {
  [K in N]: (...args: (string | number)[]) => Promise<unknown>;
};

const DEFINED = Symbol('acg.scriptSets');

/**
 * Defines every script of `set` on `redis` (once per connection and set: idempotent and cheap to
 * call before each command) and returns it typed with the script commands. Each runs by EVALSHA
 * with the script cached server-side (ioredis `defineCommand`).
 */
export function withScripts<N extends string>(redis: Redis, set: ScriptSet<N>): ScriptedRedis<N> {
  const r = redis as ScriptedRedis<N> & { [DEFINED]?: Set<ScriptSet> };
  let defined = r[DEFINED];
  if (!defined) {
    defined = new Set();
    r[DEFINED] = defined;
  }
  if (!defined.has(set)) {
    for (const [name, numberOfKeys] of Object.entries(set.numberOfKeys) as [N, number | null][]) {
      redis.defineCommand(name, { numberOfKeys: numberOfKeys ?? undefined, lua: luaSource(set, name) });
    }
    defined.add(set);
  }
  return r;
}
