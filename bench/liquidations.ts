/**
 * `npx tsx bench/liquidations.ts [--positions=10000] [--iterations=2000]`
 *
 * Query latency of the liquidation search over an index of N positions (default 10,000) in a
 * private redis-server started here (and stopped at the end). The index is written with the
 * indexer's own store (`LiquidationIndexStore.writeBlock`, one block, four protocols, health
 * factors spread over 0.85-2.0 so about a fifth are queryable), then each query shape runs
 * `--iterations` times, sequentially, through `searchLiquidations` (the function behind
 * GET /v1/liquidation-search and `mev.liquidation_search`: one Lua call + JSON parse).
 * Baselines measured in the same run on the same data:
 * - `HMGET 50 docs`: a plain Redis read of the 50 documents the default-size query returns, with
 *   the same JSON parse (the floor: what fetching the answer costs with no selection at all);
 * - `HGETALL + filter in Node`: the naive way (read the whole index, filter and sort in Node).
 * Nothing is asserted; SPEC's target is about 180 ms p50 for the whole HTTP query.
 */
import os from 'node:os';
import { resolveRedis } from '@acg/devnet';
import { LiquidationIndexStore, searchLiquidations } from '@acg/liquidations';
import { connectRedis, RedisKeys } from '@acg/redis';
import { LiquidationSearchQuery, type LendingProtocol, type LiquidationOpportunity } from '@acg/schemas';
import { getAddress, keccak256, toHex } from 'viem';
import { fmt, fmtRatio, percentile, ratio, table } from './lib/stats.js';

const args = Object.fromEntries(process.argv.slice(2).map((a) => /^--([a-z]+)=(\d+)$/.exec(a)).filter(Boolean).map((m) => [m![1], Number(m![2])]));
const N = args.positions ?? 10_000;
const ITER = args.iterations ?? 2_000;
const PROTOCOLS: LendingProtocol[] = ['aave_v3', 'spark', 'compound_v3', 'morpho_blue'];

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function time(fn: () => Promise<unknown>, n: number): Promise<number[]> {
  for (let i = 0; i < Math.min(200, n); i++) await fn(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

async function main() {
  console.log(`bench liquidations: node ${process.version}, ${os.cpus().length} CPU (${os.cpus()[0]?.model.trim() ?? '?'}); ${N} positions, ${ITER} queries per shape`);
  const handle = await resolveRedis({ preferPrivate: true });
  const redis = connectRedis({ url: handle.url, name: 'bench-liquidations' });
  try {
    const keys = new RedisKeys(`acg:bench:${Date.now()}:`);
    const store = new LiquidationIndexStore(redis, keys, 'ethereum');
    const r = rng(42);
    const token = (s: string) => getAddress(keccak256(toHex(s)).slice(0, 42));
    const writes = Array.from({ length: N }, (_, i) => {
      const protocol = PROTOCOLS[i % 4];
      const borrower = getAddress(keccak256(toHex(`borrower-${i}`)).slice(0, 42));
      const hf = 0.85 + r() * 1.15;
      const debt = 1_000 + r() * 500_000;
      const doc: LiquidationOpportunity = {
        protocol,
        borrower,
        collateral_token: token('WETH'),
        collateral_symbol: 'WETH',
        debt_token: token('USDC'),
        debt_symbol: 'USDC',
        collateral_usd: Math.round(debt * (1.1 + r()) * 100) / 100,
        debt_usd: Math.round(debt * 100) / 100,
        health_factor: hf,
        estimated_profit_usd: Math.round((debt * 0.5 * 0.05 - 5) * 100) / 100,
        deadline_block: 24_000_001,
        market: token(protocol),
        max_repay_amount: String(Math.round(debt * 0.5 * 1e6)),
        max_repay_usd: Math.round(debt * 50) / 100,
        gas_cost_usd: 5,
      };
      return { key: `${protocol}:${borrower.toLowerCase()}`, adapterId: protocol, protocol, health_factor: hf, has_debt: true, doc };
    });
    const t0 = performance.now();
    await store.writeBlock({ block_number: 24_000_000, block_timestamp: 1_760_000_000, base_fee_wei: '1000000000', eth_usd: 2500, updated_at: new Date().toISOString() }, {}, writes);
    console.log(`index written in ${fmt(performance.now() - t0)} ms (one MULTI); ${writes.filter((w) => w.health_factor <= 1.1).length} positions with health_factor <= 1.1\n`);

    const shapes: [string, Record<string, unknown>][] = [
      ['default (hf<1, limit 50)', {}],
      ['max_hf 1.1, limit 50', { max_health_factor: 1.1 }],
      ['max_hf 1.1, limit 500', { max_health_factor: 1.1, limit: 500 }],
      ['protocol=spark, min_profit 1000', { protocol: 'spark', min_profit_usd: 1000, max_health_factor: 1.1 }],
    ];
    const rows: string[][] = [];
    const results: Record<string, number[]> = {};
    for (const [name, q] of shapes) {
      const query = LiquidationSearchQuery.parse(q);
      const sample = await searchLiquidations(redis, keys, query);
      results[name] = await time(() => searchLiquidations(redis, keys, query), ITER);
      rows.push([`searchLiquidations: ${name}`, String(sample.opportunities.length), fmt(percentile(results[name], 50), 3), fmt(percentile(results[name], 99), 3)]);
    }
    const top50 = (await searchLiquidations(redis, keys, LiquidationSearchQuery.parse({}))).opportunities.map((o) => `${o.protocol}:${o.borrower.toLowerCase()}`);
    const hmget = await time(async () => (await redis.hmget(store.keys.pos, ...top50)).map((d) => JSON.parse(d!)), ITER);
    rows.push(['baseline: HMGET 50 docs + JSON.parse', '50', fmt(percentile(hmget, 50), 3), fmt(percentile(hmget, 99), 3)]);
    const naive = await time(async () => {
      const all = Object.values(await redis.hgetall(store.keys.pos)).map((d) => JSON.parse(d) as LiquidationOpportunity);
      return all.filter((o) => o.health_factor < 1).sort((a, b) => b.estimated_profit_usd - a.estimated_profit_usd).slice(0, 50);
    }, Math.max(20, Math.floor(ITER / 20)));
    rows.push(['baseline: HGETALL + filter/sort in Node', '50', fmt(percentile(naive, 50), 3), fmt(percentile(naive, 99), 3)]);
    console.log(table(['query', 'results', 'p50 ms', 'p99 ms'], rows));
    const d = results['default (hf<1, limit 50)'];
    console.log(`\nRatios (query / baseline in this run; < 1 favours the query):`);
    console.log(`  default query vs HMGET of its 50 docs:      p50 ${fmtRatio(ratio(percentile(d, 50), percentile(hmget, 50)))}, p99 ${fmtRatio(ratio(percentile(d, 99), percentile(hmget, 99)))}`);
    console.log(`  default query vs HGETALL + filter in Node:  p50 ${fmtRatio(ratio(percentile(d, 50), percentile(naive, 50)))}, p99 ${fmtRatio(ratio(percentile(d, 99), percentile(naive, 99)))}`);
    console.log(`  SPEC target: about 180 ms p50 for the HTTP query; the index read above is the part this package owns.`);
  } finally {
    redis.disconnect();
    await handle.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error('bench liquidations: failed:', e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
