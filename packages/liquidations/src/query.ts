import type { LiquidationSearchResponse, LendingProtocol, LiquidationOpportunity, LiquidationSearchQuery } from '@acg/schemas';
import type { RedisKeys } from '@acg/redis';
import { liquidationSearch } from './commands/index.js';
import type { Redis } from 'ioredis';
import { LiquidationIndexStore, PROTOCOLS } from './store.js';
import type { LiquidationChain } from './types.js';

/** The chain's index has no block yet (indexer not started or still catching up). */
export class LiquidationIndexNotReadyError extends Error {
  override name = 'LiquidationIndexNotReadyError';
  constructor(readonly chain: string) {
    super(`The liquidation index of ${chain} has no block yet; retry in a few seconds.`);
  }
}

/**
 * Answers `GET /v1/liquidation-search` from the Redis index (never from the chain): one Lua call
 * (`liquidation_search`) walks the per-protocol sorted sets by estimated profit, keeps positions
 * with `health_factor <= max_health_factor` and `estimated_profit_usd >= min_profit_usd`, and
 * returns at most `limit` documents sorted by `estimated_profit_usd` descending, all from one block.
 *
 * @param query - A parsed {@link LiquidationSearchQuery} (defaults applied).
 * @returns `{chain, block_number, opportunities}` (docs/spec-notes.md 2.5 / docs/decisions.md types).
 * @throws {LiquidationIndexNotReadyError} When the chain has never been indexed.
 */
export async function searchLiquidations(redis: Redis, keys: RedisKeys, query: LiquidationSearchQuery): Promise<LiquidationSearchResponse> {
  return (await readIndex(redis, keys, query)).response;
}

/** One Lua read of the index: the answer and the index version it was read at. */
async function readIndex(redis: Redis, keys: RedisKeys, query: LiquidationSearchQuery): Promise<{ response: LiquidationSearchResponse; version?: string }> {
  const chain = query.chain as LiquidationChain;
  const store = new LiquidationIndexStore(redis, keys, chain);
  const wanted: LendingProtocol[] = query.protocol === undefined ? [...PROTOCOLS] : Array.isArray(query.protocol) ? query.protocol : [query.protocol];
  const { blockNumber, version, documents } = await liquidationSearch(redis, {
    metaKey: store.keys.meta,
    positionsKey: store.keys.pos,
    healthFactorsKey: store.keys.hf,
    opportunityKeys: PROTOCOLS.map((p) => store.keys.opp(p)) as unknown as [string, string, string, string],
    minProfitUsd: String(query.min_profit_usd),
    maxHealthFactor: String(query.max_health_factor),
    limit: query.limit,
    include: PROTOCOLS.map((p) => wanted.includes(p)) as unknown as [boolean, boolean, boolean, boolean],
  });
  if (!blockNumber) throw new LiquidationIndexNotReadyError(chain);
  const opportunities = documents.map((d) => JSON.parse(d) as LiquidationOpportunity);
  return { response: { chain: query.chain, block_number: Number(blockNumber), opportunities }, version };
}

/** Queries kept per chain and index version by {@link cachedLiquidationSearch}. */
const CACHED_QUERIES = 256;

interface VersionCache {
  version: string;
  answers: Map<string, Promise<LiquidationSearchResponse>>;
}

/** Per Redis client (one per process and deployment) and chain: the answers read at the newest version seen. */
const caches = new WeakMap<Redis, Map<string, VersionCache>>();

/**
 * {@link searchLiquidations} with the answers reused while the index is unchanged: the index is
 * rewritten once per block (its `version` counter moves with every write), and one query asked again
 * at the same version has the same answer. One `HGET` of the version, then the answer kept in this
 * process (at most 256 queries per chain, for the newest version only), or one Lua read shared by
 * every identical query arriving while it runs. What GET /v1/liquidation-search and
 * `mev.liquidation_search` answer with; an index without a version counter is read every time.
 *
 * @param query - A parsed {@link LiquidationSearchQuery} (defaults applied).
 * @returns `{chain, block_number, opportunities}`, deeply frozen (shared between callers).
 * @throws {LiquidationIndexNotReadyError} When the chain has never been indexed.
 */
export async function cachedLiquidationSearch(redis: Redis, keys: RedisKeys, query: LiquidationSearchQuery): Promise<LiquidationSearchResponse> {
  const chain = query.chain as LiquidationChain;
  const version = await redis.hget(new LiquidationIndexStore(redis, keys, chain).keys.meta, 'version');
  if (version === null) return searchLiquidations(redis, keys, query);
  let byChain = caches.get(redis);
  if (!byChain) {
    byChain = new Map();
    caches.set(redis, byChain);
  }
  let cache = byChain.get(chain);
  if (!cache || cache.version !== version) {
    // a newer version (or, after a Redis failover, an older one): the previous answers are stale
    cache = { version, answers: new Map() };
    byChain.set(chain, cache);
  }
  const protocols = query.protocol === undefined ? '*' : [query.protocol].flat().join(',');
  const key = `${protocols}|${query.min_profit_usd}|${query.max_health_factor}|${query.limit}`;
  const hit = cache.answers.get(key);
  if (hit) return hit;
  const current = cache;
  const answer = readIndex(redis, keys, query).then(({ response, version: readAt }) => {
    // the index moved between the version read and the script: keep it only under its own version
    if (readAt !== current.version) current.answers.delete(key);
    return deepFreeze(response);
  });
  if (current.answers.size >= CACHED_QUERIES) current.answers.clear();
  current.answers.set(key, answer);
  answer.catch(() => current.answers.delete(key));
  return answer;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** True when the chain's index has a block (a cheap pre-payment check). */
export async function liquidationIndexReady(redis: Redis, keys: RedisKeys, chain: LiquidationChain): Promise<boolean> {
  return (await redis.hexists(new LiquidationIndexStore(redis, keys, chain).keys.meta, 'block_number')) === 1;
}
