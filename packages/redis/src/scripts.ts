import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

/**
 * The gateway's atomic Redis logic, one Lua file per script in `./lua`, loaded by name
 * (docs/code-style.md, bullmq's `src/commands`). Each is registered on a connection with
 * `defineCommand`, so it runs by EVALSHA with the script cached server-side.
 */
export const SCRIPTS = {
  reserve_authorization: 2,
  transition_authorization: 2,
  release_authorization: 2,
  claim_idempotency_key: 1,
  release_binding: 1,
  token_bucket: 1,
  debit_account: 3,
  credit_account: 3,
  wm_cancel_subscription: 2,
  wm_renew_subscription: 3,
  wm_lease: 1,
  liquidation_search: 7,
  release_lease: 1,
  hdel_if_equal: 1,
  pl_credit: 5,
  pl_mature: 3,
  pl_dispute_open: 5,
  pl_dispute_respond: 1,
  pl_dispute_resolve: 6,
  pl_credit_reverse: 6,
  pl_payout_reserve: 4,
  pl_payout_settle: 3,
  // dynamic: the caller passes numkeys first (2 keys per target block)
  bundle_add: null,
} as const;

export type ScriptName = keyof typeof SCRIPTS;

const cache = new Map<ScriptName, string>();

/** The source text of a Lua script by name. Throws if the file is missing (a packaging error). */
export function luaSource(name: ScriptName): string {
  let src = cache.get(name);
  if (src === undefined) {
    src = readFileSync(fileURLToPath(new URL(`./lua/${name}.lua`, import.meta.url)), 'utf8');
    cache.set(name, src);
  }
  return src;
}

/** A Redis connection with every script defined as a command of the same name. */
export type ScriptedRedis = Redis & {
  [K in ScriptName]: (...args: (string | number)[]) => Promise<unknown>;
};

/** Defines every script on `redis` (idempotent) and returns it typed with the script commands. */
export function withScripts(redis: Redis): ScriptedRedis {
  const r = redis as ScriptedRedis & { __acgScripts?: boolean };
  if (!r.__acgScripts) {
    for (const [name, numberOfKeys] of Object.entries(SCRIPTS)) {
      redis.defineCommand(name, { numberOfKeys: numberOfKeys ?? undefined, lua: luaSource(name as ScriptName) });
    }
    r.__acgScripts = true;
  }
  return r;
}
