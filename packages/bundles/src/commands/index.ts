import { scriptSet, withScripts } from '@acg/redis';
import type { Redis } from 'ioredis';

export { bundleKeys } from './keys.js';

/**
 * The orderflow pool of @acg/bundles (packages/bundles README): the Lua scripts in `./lua` (one file per script, loaded by name, as bullmq keeps its
 * commands), each called through a typed wrapper below with named arguments (as bullmq's
 * `addStandardJobArgs` builds KEYS and ARGV) and a typed result. Each wrapper defines its
 * scripts on the connection on first use (`withScripts`, idempotent). `bundle_add` takes its number of keys first (7 + 2 keys per target block).
 */
const SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), {
  // dynamic: the caller passes numkeys first (2 keys per target block)
  bundle_add: null,
});

export interface AddBundleParameters {
  /** builder stats hash (`bids_received`) */
  statsKey: string;
  /** the searcher's bundle counters (`builder:searcher:<address>`) */
  searcherKey: string;
  /** the searcher's metered account hash (`RedisKeys.account`) and its usage list (`RedisKeys.accountUsage`) */
  accountKey: string;
  usageKey: string;
  /** the searcher's replacement-uuid key (any key of the deployment when `uuidValue` is empty) */
  uuidKey: string;
  /** `<first block>|<pool field>`, or '' when the bundle has no replacement uuid */
  uuidValue: string;
  /** the searcher's priced-bundle marker of this bundle's identity (same transactions and block, or same uuid and block): set once priced, for the pool TTL */
  pricedKey: string;
  /** the searcher's replacement-nonce key of the uuid (any key of the deployment when `uuidValue` is empty) */
  nonceKey: string;
  /** `replacementNonce`, or undefined when the bundle has none */
  replacementNonce?: number;
  /** the bundle hash (a resend with the same nonce and hash is accepted) */
  bundleHash: string;
  /** per target block: pool hash, bundle-stats hash and the stored bundle (JSON) */
  blocks: readonly { poolKey: string; statsKey: string; json: string }[];
  /** pool field, `<searcher>:<bundle_hash>` */
  field: string;
  /** stats field of the receipt, `recv:<searcher>` */
  receiptField: string;
  receivedAtMs: number;
  receivedAtIso: string;
  /** required tx hashes, comma-separated */
  requiredTxs: string;
  poolTtlSeconds: number;
  statsTtlSeconds: number;
  /** price of one bundle, integer base units */
  amount: bigint | string;
  /** `x402`: already paid; `rpc`: from the metered account when it holds the price, else owed */
  paidBy: 'x402' | 'rpc';
  /** usage line (JSON) written when the account pays */
  usageLine: string;
  maxUsageLines: number;
}

/**
 * What `bundle_add.lua` did: how the bundle was priced, the account balance after, and the uuid key's former value;
 * or `refused` (nothing written): `stale_nonce` when its `replacementNonce` is not above the uuid's last accepted one,
 * `nonce_required` when the uuid is ordered by nonce and the bundle has none; `lastNonce` is that last one.
 */
export type AddBundleReturnType = AddBundleAccepted | { refused: 'stale_nonce' | 'nonce_required'; lastNonce: number };

/** {@link AddBundleReturnType} of a bundle that was queued. */
export interface AddBundleAccepted {
  refused?: undefined;
  charged: 'paid' | 'debited' | 'owed';
  /** integer base units ('' for x402) */
  balance: string;
  /** the replacement-uuid key's former value (`<block>|<field>`), or undefined */
  previous?: string;
  /** true when this searcher's bundle was already priced (a resend): `charged` is how the first was priced, nothing moved now */
  resent: boolean;
  /** this searcher's first receipt of the bundle for its first block, UNIX ms (a resend keeps the first one's) */
  receivedAtMs: number;
}

/**
 * `bundle_add.lua`: queues one accepted bundle in the pool of each target block, records its
 * receipt, counts it and prices it (x402: paid; else debited from the searcher's metered account
 * when it holds the price, or owed), and swaps its replacement uuid, atomically in one round trip.
 * A bundle whose `pricedKey` is set (a resend) is stored again but neither counted nor priced.
 */
export async function addBundle(redis: Redis, p: AddBundleParameters): Promise<AddBundleReturnType> {
  const keys = [p.statsKey, p.searcherKey, p.accountKey, p.usageKey, p.uuidKey, p.pricedKey, p.nonceKey, ...p.blocks.flatMap((b) => [b.poolKey, b.statsKey])];
  const [charged, balance, previous, resent, received] = (await withScripts(redis, SCRIPTS).bundle_add(
    keys.length,
    ...keys,
    p.field,
    p.receiptField,
    p.receivedAtMs,
    p.receivedAtIso,
    p.requiredTxs,
    p.poolTtlSeconds,
    p.statsTtlSeconds,
    p.amount.toString(),
    p.paidBy,
    p.uuidValue,
    p.usageLine,
    p.maxUsageLines,
    p.replacementNonce === undefined ? '' : String(p.replacementNonce),
    p.bundleHash,
    ...p.blocks.map((b) => b.json),
  )) as [-2 | -1 | 0 | 1 | 2, string, string, 0 | 1, string];
  if (charged < 0) return { refused: charged === -1 ? 'stale_nonce' : 'nonce_required', lastNonce: Number(balance) };
  return {
    charged: charged === 2 ? 'paid' : charged === 1 ? 'debited' : 'owed',
    balance,
    previous: previous || undefined,
    resent: resent === 1,
    receivedAtMs: Number(received),
  };
}
