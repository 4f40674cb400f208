import { resolveRedis, type RedisHandle } from '@acg/devnet';
import { cachedLiquidationSearch, LiquidationIndexStore, searchLiquidations, type PositionWrite } from '@acg/liquidations';
import { RedisKeys } from '@acg/redis';
import { LiquidationSearchQuery, type LendingProtocol } from '@acg/schemas';
import { Redis } from 'ioredis';
import { getAddress, keccak256, toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// cachedLiquidationSearch (GET /v1/liquidation-search, mev.liquidation_search) reuses an answer
// only while the index's version counter is unchanged: every written block moves it.

let handle: RedisHandle;
let redis: Redis;
const keys = new RedisKeys('acg:test:liqcache:');

beforeAll(async () => {
  handle = await resolveRedis({ preferPrivate: true });
  redis = new Redis(handle.url);
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await handle?.stop();
});

function position(i: number, healthFactor: number, profitUsd: number, hasDebt = true): PositionWrite {
  const protocol: LendingProtocol = 'aave_v3';
  const borrower = getAddress(keccak256(toHex(`cache-borrower-${i}`)).slice(0, 42));
  const token = getAddress(keccak256(toHex('WETH')).slice(0, 42));
  return {
    key: `${protocol}:${borrower.toLowerCase()}`,
    adapterId: protocol,
    protocol,
    health_factor: healthFactor,
    has_debt: hasDebt,
    doc: {
      protocol,
      borrower,
      collateral_token: token,
      collateral_symbol: 'WETH',
      debt_token: token,
      debt_symbol: 'USDC',
      collateral_usd: 1000,
      debt_usd: 990,
      health_factor: healthFactor,
      estimated_profit_usd: profitUsd,
      deadline_block: 101,
      market: token,
      max_repay_amount: '495000000',
      max_repay_usd: 495,
      gas_cost_usd: 5,
    },
  };
}

const meta = (block: number) => ({
  block_number: block,
  block_timestamp: 1_760_000_000 + block,
  base_fee_wei: '1000000000',
  eth_usd: 2500,
  updated_at: new Date().toISOString(),
});

describe('cachedLiquidationSearch', () => {
  it('answers like the uncached read, reuses the answer at one index version, and reads again after each written block', async () => {
    const store = new LiquidationIndexStore(redis, keys, 'ethereum');
    await store.writeBlock(meta(100), {}, [position(1, 0.9, 300), position(2, 0.95, 200), position(3, 0.97, 100)]);
    const query = LiquidationSearchQuery.parse({ chain: 'ethereum' });

    const first = await cachedLiquidationSearch(redis, keys, query);
    expect(first).toEqual(await searchLiquidations(redis, keys, query));
    expect(first.block_number).toBe(100);
    expect(first.opportunities.map((o) => o.estimated_profit_usd)).toEqual([300, 200, 100]);
    // the same answer object while the index is unchanged, frozen because callers share it
    expect(await cachedLiquidationSearch(redis, keys, query)).toBe(first);
    expect(Object.isFrozen(first.opportunities[0])).toBe(true);
    // another query is another answer
    const top1 = await cachedLiquidationSearch(redis, keys, LiquidationSearchQuery.parse({ chain: 'ethereum', limit: 1 }));
    expect(top1.opportunities.map((o) => o.estimated_profit_usd)).toEqual([300]);

    // the next block repays position 1 and makes position 3 more profitable
    await store.writeBlock(meta(101), {}, [position(1, 2, 0, false), position(3, 0.97, 400)]);
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => cachedLiquidationSearch(redis, keys, query)));
    expect(concurrent[0]).not.toBe(first);
    expect(concurrent[0].block_number).toBe(101);
    expect(concurrent[0].opportunities.map((o) => o.estimated_profit_usd)).toEqual([400, 200]);
    expect(concurrent[0]).toEqual(await searchLiquidations(redis, keys, query));
    // identical queries arriving together share one read
    for (const c of concurrent) expect(c).toBe(concurrent[0]);
  });
});
