import type { LiquidationSearchResponse, LendingProtocol, LiquidationOpportunity, LiquidationSearchQuery } from '@acg/schemas';
import { liquidationSearch, type RedisKeys } from '@acg/redis';
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
 * @returns `{chain, block_number, opportunities}` (SPEC 2.5 / DESIGN types).
 * @throws {LiquidationIndexNotReadyError} When the chain has never been indexed.
 */
export async function searchLiquidations(redis: Redis, keys: RedisKeys, query: LiquidationSearchQuery): Promise<LiquidationSearchResponse> {
  const chain = query.chain as LiquidationChain;
  const store = new LiquidationIndexStore(redis, keys, chain);
  const wanted: LendingProtocol[] = query.protocol === undefined ? [...PROTOCOLS] : Array.isArray(query.protocol) ? query.protocol : [query.protocol];
  const { blockNumber, documents } = await liquidationSearch(redis, {
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
  return { chain: query.chain, block_number: Number(blockNumber), opportunities };
}

/** True when the chain's index has a block (a cheap pre-payment check). */
export async function liquidationIndexReady(redis: Redis, keys: RedisKeys, chain: LiquidationChain): Promise<boolean> {
  return (await redis.hexists(new LiquidationIndexStore(redis, keys, chain).keys.meta, 'block_number')) === 1;
}
