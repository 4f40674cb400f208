import { aavePoolAbi, cometAbi, morphoAbi, searchLiquidations, startLiquidationIndexer, type LiquidationIndexer } from '@acg/liquidations';
import { connectRedis, RedisKeys } from '@acg/redis';
import { LiquidationSearchQuery, type LiquidationOpportunity } from '@acg/schemas';
import type { Redis } from 'ioredis';
import { createPublicClient, http, type PublicClient } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compileLendingContracts,
  DevSender,
  lendingIndexerConfig,
  resolveRedis,
  SEED_PRICES,
  setDevPrice,
  setupLendingDevnet,
  startAnvil,
  type AnvilInstance,
  type LendingDevnet,
  type RedisHandle,
} from '../src/index.js';
import { liquidationKeys } from '@acg/liquidations/commands';

/**
 * The lending dev data and the liquidation index on it (docs/decisions.md "Liquidation search"): real Aave v3
 * (Aave and Spark), real Morpho Blue, our Comet; a private Redis; the indexer polling every 50 ms.
 */
let anvil: AnvilInstance;
let redisHandle: RedisHandle;
let redis: Redis;
let dev: LendingDevnet;
let indexer: LiquidationIndexer;
let client: PublicClient;
const keys = new RedisKeys(`acg:test:lending:${process.pid}:${Date.now()}:`);

beforeAll(async () => {
  [anvil, redisHandle] = await Promise.all([startAnvil({ chainId: 1 }), resolveRedis({ preferPrivate: true })]);
  dev = await setupLendingDevnet(anvil.rpcUrl);
  client = createPublicClient({ transport: http(anvil.rpcUrl) }) as PublicClient;
  redis = connectRedis({ url: redisHandle.url });
  indexer = await startLiquidationIndexer({
    chain: 'ethereum',
    rpcUrl: anvil.rpcUrl,
    redis: redisHandle.url,
    keyPrefix: keys.prefix,
    pollIntervalMs: 50,
    ...lendingIndexerConfig(dev.deployment),
  });
});

afterAll(async () => {
  await indexer?.stop();
  redis?.disconnect();
  await anvil?.stop();
  await redisHandle?.stop();
});

const search = (q: Record<string, unknown> = {}) => searchLiquidations(redis, keys, LiquidationSearchQuery.parse(q));
const keyOf = (o: { protocol: string; borrower: string }) => `${o.protocol}:${o.borrower.toLowerCase()}`;

/** Every tracked position's stored document at the current index block. */
async function storedDocs(): Promise<Map<string, LiquidationOpportunity>> {
  const all = await redis.hgetall(liquidationKeys.liquidationIndex(keys, 'ethereum', 'pos'));
  return new Map(
    Object.values(all).map((j) => {
      const d = JSON.parse(j) as LiquidationOpportunity;
      return [keyOf(d), d];
    }),
  );
}

/** Indexes the head and returns the block it indexed. */
async function indexHead(): Promise<bigint> {
  const head = await client.getBlockNumber({ cacheTime: 0 });
  await indexer.waitForBlock(head);
  return head;
}

describe('dev data', () => {
  it('deploys Aave and Spark from @aave/core-v3, Morpho Blue from source, and seeds 24 positions', async () => {
    expect(dev.deployment.aaveCoreVersion).toMatch(/^1\.19\./);
    expect(Object.keys(compileLendingContracts())).toEqual(expect.arrayContaining(['Morpho', 'DevComet', 'MorphoHealthLens']));
    expect(dev.positions).toHaveLength(24);
    const [aaveRevision, sparkRevision] = await Promise.all(
      [dev.deployment.aave.pool, dev.deployment.spark.pool].map((p) =>
        client.readContract({
          address: p,
          abi: [{ type: 'function', name: 'POOL_REVISION', inputs: [], outputs: [{ type: 'uint256' }], stateMutability: 'view' }],
          functionName: 'POOL_REVISION',
        }),
      ),
    );
    expect(aaveRevision).toBe(1n);
    expect(sparkRevision).toBe(1n);
  });
});

describe('health factors equal each protocol’s own on-chain value (every seeded position)', () => {
  it('Aave v3 and Spark: getUserAccountData().healthFactor', async () => {
    const block = await indexHead();
    const docs = await storedDocs();
    const aaveLike = dev.positions.filter((p) => p.protocol === 'aave_v3' || p.protocol === 'spark');
    expect(aaveLike).toHaveLength(12);
    for (const p of aaveLike) {
      const pool = p.protocol === 'aave_v3' ? dev.deployment.aave.pool : dev.deployment.spark.pool;
      const acct = await client.readContract({ address: pool, abi: aavePoolAbi, functionName: 'getUserAccountData', args: [p.borrower], blockNumber: block });
      const doc = docs.get(keyOf(p))!;
      expect(doc, `${p.protocol} ${p.borrower}`).toBeDefined();
      expect(Math.abs(doc.health_factor - Number(acct[5]) / 1e18)).toBeLessThan(1e-15);
      expect(doc.health_factor < 1).toBe(acct[5] < 10n ** 18n);
      expect(doc.debt_usd).toBeCloseTo(Number(acct[1]) / 1e8, 6);
      expect(doc.collateral_usd).toBeCloseTo(Number(acct[0]) / 1e8, 6);
    }
  });

  it('Compound v3: health_factor < 1 exactly when Comet.isLiquidatable', async () => {
    const block = await indexHead();
    const docs = await storedDocs();
    const comet = dev.positions.filter((p) => p.protocol === 'compound_v3');
    expect(comet).toHaveLength(6);
    let liquidatable = 0;
    for (const p of comet) {
      const onChain = await client.readContract({
        address: dev.deployment.comet.address,
        abi: cometAbi,
        functionName: 'isLiquidatable',
        args: [p.borrower],
        blockNumber: block,
      });
      const doc = docs.get(keyOf(p))!;
      expect(doc.health_factor < 1, `${p.label} ${doc.health_factor}`).toBe(onChain);
      expect(doc.health_factor).toBeCloseTo(p.targetHealthFactor, 2);
      if (onChain) liquidatable++;
    }
    expect(liquidatable).toBe(2);
  });

  it('Morpho Blue: health_factor = maxBorrow / borrowed of Morpho’s own _isHealthy (MorphoHealthLens, interest accrued)', async () => {
    const block = await indexHead();
    const docs = await storedDocs();
    const morpho = dev.positions.filter((p) => p.protocol === 'morpho_blue');
    expect(morpho).toHaveLength(6);
    const lensAbi = compileLendingContracts().MorphoHealthLens.abi;
    for (const p of morpho) {
      const market = Object.values(dev.deployment.morpho.markets).find((m) => m.id === p.marketId)!;
      const [borrowed, maxBorrow, healthy] = (await client.readContract({
        address: dev.deployment.morpho.lens,
        abi: lensAbi,
        functionName: 'health',
        args: [dev.deployment.morpho.address, market.params, p.borrower],
        blockNumber: block,
      })) as [bigint, bigint, boolean];
      const doc = [...docs.values()].find((d) => d.protocol === 'morpho_blue' && d.borrower === p.borrower && d.market_id === p.marketId)!;
      expect(doc, p.borrower).toBeDefined();
      const exact = Number((maxBorrow * 10n ** 18n) / borrowed) / 1e18;
      expect(Math.abs(doc.health_factor - exact)).toBeLessThan(1e-15);
      expect(doc.health_factor < 1).toBe(!healthy);
    }
  });

  it('a liquidatable Morpho position is accepted by Morpho.liquidate and a healthy one is refused', async () => {
    const docs = await storedDocs();
    const m = dev.positions.filter((p) => p.protocol === 'morpho_blue');
    const liquidatable = m.find((p) => p.label === 'liquidatable')!;
    const healthy = m.find((p) => p.label === 'healthy')!;
    const market = Object.values(dev.deployment.morpho.markets).find((x) => x.id === liquidatable.marketId)!;
    const doc = [...docs.values()].find((d) => d.borrower === liquidatable.borrower)!;
    expect(doc.health_factor).toBeLessThan(1);
    const sim = (borrower: `0x${string}`) =>
      client.simulateContract({
        account: dev.deployment.deployer,
        address: dev.deployment.morpho.address,
        abi: morphoAbi,
        functionName: 'liquidate',
        args: [market.params, borrower, 1n, 0n, '0x'],
      });
    // Seizing 1 wei of collateral repays a rounding unit of USDC: give the deployer some.
    await new DevSender(anvil.rpcUrl).write(dev.deployment.deployer, dev.deployment.tokens.USDC.address, compileLendingContracts().DevToken.abi, 'mint', [
      dev.deployment.deployer,
      10n ** 9n,
    ]);
    await expect(sim(liquidatable.borrower)).resolves.toBeDefined();
    await expect(sim(healthy.borrower)).rejects.toThrow(/position is healthy/i);
  });
});

describe('query', () => {
  it('returns what each label says at the seed prices, sorted by estimated_profit_usd desc', async () => {
    await indexHead();
    const r = await search({ max_health_factor: '1.1', limit: '500' });
    const keysReturned = new Set(r.opportunities.map((o) => `${o.protocol}:${o.borrower}`));
    for (const p of dev.positions) {
      const returned = keysReturned.has(`${p.protocol}:${p.borrower}`);
      expect(returned, `${p.protocol} ${p.label}`).toBe(p.label !== 'healthy');
    }
    const profits = r.opportunities.map((o) => o.estimated_profit_usd);
    expect(profits).toEqual([...profits].sort((a, b) => b - a));
    for (const o of r.opportunities) expect(o.deadline_block).toBe(r.block_number + 1);
  });

  it('defaults to liquidatable now (health_factor < 1, max_health_factor 1.0)', async () => {
    const r = await search();
    expect(r.chain).toBe('ethereum');
    expect(r.opportunities.length).toBe(dev.positions.filter((p) => p.label === 'liquidatable' || p.label === 'deeply_liquidatable').length);
    for (const o of r.opportunities) expect(o.health_factor).toBeLessThan(1);
  });

  it('filters by protocol (repeatable), min_profit_usd and limit', async () => {
    const one = await search({ protocol: 'spark', max_health_factor: '1.1' });
    expect(one.opportunities.length).toBeGreaterThan(0);
    expect(new Set(one.opportunities.map((o) => o.protocol))).toEqual(new Set(['spark']));
    const two = await search({ protocol: ['aave_v3', 'morpho_blue'], max_health_factor: '1.1' });
    expect(new Set(two.opportunities.map((o) => o.protocol))).toEqual(new Set(['aave_v3', 'morpho_blue']));
    const all = await search({ max_health_factor: '1.1', limit: '500' });
    const threshold = all.opportunities[Math.floor(all.opportunities.length / 2)].estimated_profit_usd;
    const rich = await search({ max_health_factor: '1.1', min_profit_usd: String(threshold) });
    expect(rich.opportunities.length).toBe(all.opportunities.filter((o) => o.estimated_profit_usd >= threshold).length);
    for (const o of rich.opportunities) expect(o.estimated_profit_usd).toBeGreaterThanOrEqual(threshold);
    const top3 = await search({ max_health_factor: '1.1', limit: '3' });
    expect(top3.opportunities).toEqual(all.opportunities.slice(0, 3));
  });

  it('prices gas at the block base fee: estimated_profit_usd = gross − gas_cost_usd', async () => {
    await client.request({ method: 'anvil_setNextBlockBaseFeePerGas' as never, params: ['0x' + (50n * 10n ** 9n).toString(16)] as never });
    await client.request({ method: 'evm_mine' as never, params: [] as never });
    await indexHead();
    const r = await search();
    const meta = await redis.hgetall(liquidationKeys.liquidationIndex(keys, 'ethereum', 'meta'));
    expect(BigInt(meta.base_fee_wei)).toBeGreaterThan(10n ** 9n);
    for (const o of r.opportunities) {
      expect(o.gas_cost_usd).toBeGreaterThan(1);
      expect(o.gas_cost_usd).toBeLessThan(200);
    }
  });
});

describe('an oracle move', () => {
  it('turns a healthy (at-risk) position into an opportunity within one block, and back', async () => {
    const atRisk = dev.positions.filter((p) => p.label === 'at_risk' && p.collateral === 'WETH');
    const before = await search({ limit: '500' });
    for (const p of atRisk) expect(before.opportunities.some((o) => o.borrower === p.borrower)).toBe(false);

    const moved = await setDevPrice(anvil.rpcUrl, dev.deployment, 'WETH', SEED_PRICES.WETH * 0.9);
    await indexer.waitForBlock(moved);
    const after = await search({ limit: '500' });
    expect(after.block_number).toBeGreaterThanOrEqual(Number(moved));
    for (const p of atRisk) {
      const o = after.opportunities.find((x) => x.borrower === p.borrower);
      expect(o, `${p.protocol} ${p.borrower}`).toBeDefined();
      expect(o!.health_factor).toBeLessThan(1);
    }

    const restored = await setDevPrice(anvil.rpcUrl, dev.deployment, 'WETH', SEED_PRICES.WETH);
    await indexer.waitForBlock(restored);
    const back = await search({ limit: '500' });
    for (const p of atRisk) expect(back.opportunities.some((o) => o.borrower === p.borrower)).toBe(false);
  });
});
