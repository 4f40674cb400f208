import { scriptSet, withScripts } from '@acg/redis';
import type { Redis } from 'ioredis';

export { liquidationKeys } from './keys.js';

/**
 * The liquidation index of @acg/liquidations (packages/liquidations README): the Lua scripts in `./lua` (one file per script, loaded by name, as bullmq keeps its
 * commands), each called through a typed wrapper below with named arguments (as bullmq's
 * `addStandardJobArgs` builds KEYS and ARGV) and a typed result. Each wrapper defines its
 * scripts on the connection on first use (`withScripts`, idempotent).
 */
const SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), {
  liquidation_search: 7,
});

export interface LiquidationSearchParameters {
  metaKey: string;
  positionsKey: string;
  healthFactorsKey: string;
  /** the four per-protocol sorted sets, in the order aave_v3, spark, compound_v3, morpho_blue */
  opportunityKeys: readonly [string, string, string, string];
  /** decimal strings, inclusive */
  minProfitUsd: string;
  maxHealthFactor: string;
  limit: number;
  /** one flag per opportunity set: include it */
  include: readonly [boolean, boolean, boolean, boolean];
}

/**
 * `liquidation_search.lua`: the top opportunities of one consistent index block; `blockNumber`
 * undefined when never indexed; `version` the meta hash's write counter at that read (undefined for
 * an index written before the counter existed).
 */
export async function liquidationSearch(
  redis: Redis,
  p: LiquidationSearchParameters,
): Promise<{ blockNumber?: string; version?: string; documents: string[] }> {
  const out = (await withScripts(redis, SCRIPTS).liquidation_search(
    p.metaKey,
    p.positionsKey,
    p.healthFactorsKey,
    ...p.opportunityKeys,
    p.minProfitUsd,
    p.maxHealthFactor,
    p.limit,
    p.include.map((b) => (b ? '1' : '0')).join(''),
  )) as string[];
  return { blockNumber: out[0] || undefined, version: out[1] || undefined, documents: out.slice(2) };
}
