/**
 * `npx tsx bench/liquidationPlans.ts [--plans=200] [--loops=2]` (`npm run bench -- liquidation-plans`)
 *
 * Liquidation plans (docs/liquidation-plans.md) on the lending dev chain (anvil chain id 1, real
 * Aave v3.0.2 as Aave and as Spark; the dev searcher holds the debt assets):
 *
 * 1. **Plans per second with simulation**: `planLiquidation` (what `mev.liquidation_plan` runs after
 *    payment: the protocol planner's reads at the latest block, then `eth_simulateV1` with
 *    `traceTransfers` of the calls at the next block, flows priced) `--plans` times, one at a time,
 *    alternating the Aave and Spark liquidatable positions, against two baselines measured in the
 *    same run on the same positions: the planner alone (`prepareLiquidationPlan`, what the gateway
 *    runs before payment) and one bare `eth_simulateV1` of the same calls (the node's floor).
 * 2. **Blocks from "position becomes liquidatable" to "liquidated"**, for `--loops` WETH drops
 *    ($1,900: the Aave and Spark at_risk positions fall below 1; $1,240: the healthy ones): the
 *    WETH feed moves in block B, the indexer indexes B, the search shows the positions that were
 *    not liquidatable before, each is planned, the plans are signed by the searcher (nonces in
 *    order) and sent as one bundle with `eth_sendBundle` to the builder (dev relays, dev mining),
 *    whose next attempt seals and mines block L. Each row is L − B against the best the dev chain
 *    allows: 1 (the next block), with the wall time from the price move to L.
 * Nothing is asserted.
 */
import { builderConfigFromEnv, startBuilder, startDevRelays } from '@acg/builder';
import {
  DEV_ROLES,
  devAccount,
  lendingIndexerConfig,
  resolveRedis,
  setDevPrice,
  setupLendingDevnet,
  startEthereumDevChain,
  type SeededPosition,
} from '@acg/devnet';
import {
  isPlanRefusal,
  planLiquidation,
  prepareLiquidationPlan,
  searchLiquidations,
  simulatePlanCalls,
  startLiquidationIndexer,
  type PlanLiquidationOptions,
} from '@acg/liquidations';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { LiquidationPlan, LiquidationPlanRequest } from '@acg/schemas';
import { ulid } from 'ulid';
import { createPublicClient, http, type Hex, type PublicClient } from 'viem';
import { sendBundle } from '../packages/sdk/src/builder.js';
import { signPlanTransactions } from '../packages/sdk/src/bundles.js';
import { fmt, fmtRatio, machine, percentile, ratio, table } from './lib/stats.js';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => /^--([a-z]+)=(\d+)$/.exec(a))
    .filter(Boolean)
    .map((m) => [m![1], Number(m![2])]),
);
const PLANS = args.plans ?? 200;
const LOOPS = args.loops ?? 2;
const DROPS = [1900, 1240];
const WARMUP = 20;

async function timed(n: number, f: (i: number) => Promise<unknown>): Promise<{ perSec: number; p50: number; p99: number }> {
  const ms: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f(i);
    ms.push(performance.now() - t);
  }
  const total = performance.now() - t0;
  return { perSec: (n * 1000) / total, p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

async function main() {
  console.log(`liquidation plans: ${machine()}; ${new Date().toISOString()}`);
  const eth = await startEthereumDevChain({ quiet: true });
  const redisHandle = await resolveRedis({ preferPrivate: true });
  const stops: (() => Promise<unknown>)[] = [() => eth.stop(), () => redisHandle.stop()];
  try {
    const dev = await setupLendingDevnet(eth.rpcUrl);
    const client = createPublicClient({ transport: http(eth.rpcUrl), cacheTime: 0 }) as PublicClient;
    const searcher = devAccount(DEV_ROLES.searcher);
    const opts: PlanLiquidationOptions = { client, chain: 'ethereum', ethUsd: 2000 };
    const tokens = dev.deployment.tokens;
    const request = (p: SeededPosition): LiquidationPlanRequest => ({
      chain: 'ethereum',
      searcher: searcher.address,
      opportunity: {
        protocol: p.protocol,
        borrower: p.borrower,
        market: p.protocol === 'spark' ? dev.deployment.spark.pool : dev.deployment.aave.pool,
        collateral_token: tokens[p.collateral].address,
        debt_token: tokens[p.debt].address,
      },
    });
    const targets = dev.positions.filter((p) => (p.protocol === 'aave_v3' || p.protocol === 'spark') && p.label === 'liquidatable').map(request);

    // 1. plans per second
    for (let i = 0; i < WARMUP; i++) await planLiquidation(opts, targets[i % targets.length]);
    const prepared = await prepareLiquidationPlan(opts, targets[0]);
    if (isPlanRefusal(prepared)) throw new Error(`bench: the planner refused ${prepared.refused}: ${prepared.detail}`);
    const planned = await timed(PLANS, async (i) => {
      const r = await planLiquidation(opts, targets[i % targets.length]);
      if (isPlanRefusal(r)) throw new Error(`bench: refused ${r.refused}: ${r.detail}`);
    });
    const plannerOnly = await timed(PLANS, (i) => prepareLiquidationPlan(opts, targets[i % targets.length]));
    const bareSim = await timed(PLANS, () =>
      simulatePlanCalls(client, searcher.address, prepared.plan.calls, { parent: prepared.parent.number, timestamp: prepared.ctx.timestamp }),
    );
    console.log(`\n${PLANS} plans, one at a time (after ${WARMUP} warm-up), Aave and Spark positions alternating:\n`);
    console.log(
      table(
        ['', 'plans/s', 'p50 ms', 'p99 ms'],
        [
          ['planLiquidation (planner + eth_simulateV1 + pricing)', fmt(planned.perSec), fmt(planned.p50, 2), fmt(planned.p99, 2)],
          ['baseline: planner alone (before payment)', fmt(plannerOnly.perSec), fmt(plannerOnly.p50, 2), fmt(plannerOnly.p99, 2)],
          ['baseline: one bare eth_simulateV1 of the calls', fmt(bareSim.perSec), fmt(bareSim.p50, 2), fmt(bareSim.p99, 2)],
        ],
      ),
    );
    console.log(
      `  ratio plans/s: ${fmtRatio(ratio(planned.perSec, plannerOnly.perSec))} of the planner alone, ${fmtRatio(ratio(planned.perSec, bareSim.perSec))} of a bare simulation`,
    );

    // 2. blocks from liquidatable to liquidated, through the index, the plan and our builder
    const keys = new RedisKeys(`acg:bench:plans:${ulid()}:`);
    const indexer = await startLiquidationIndexer({
      chain: 'ethereum',
      rpcUrl: eth.rpcUrl,
      redis: redisHandle.url,
      keyPrefix: keys.prefix,
      pollIntervalMs: 20,
      ...lendingIndexerConfig(dev.deployment),
    });
    stops.unshift(() => indexer.stop());
    const relays = await startDevRelays({ ethereumRpcUrl: eth.rpcUrl });
    stops.unshift(() => relays.close());
    const builder = await startBuilder(
      builderConfigFromEnv(
        {},
        {
          port: 0,
          redisUrl: redisHandle.url,
          keyPrefix: `acg:bench:builder:${ulid()}:`,
          ethereumRpcUrl: eth.rpcUrl,
          relays: relays.relays.map((r) => ({ name: r.name, url: r.url })),
          devMining: true,
          slotMs: 0,
          headPollMs: 0,
          logLevel: 'silent',
        },
      ),
      { bidder: false },
    );
    stops.unshift(() => builder.close());
    const redis = connectRedis({ url: redisHandle.url });
    stops.unshift(async () => redis.disconnect());

    const rows: string[][] = [];
    const blocks: number[] = [];
    const liquidatableNow = async () =>
      (await searchLiquidations(redis, keys, { chain: 'ethereum', protocol: ['aave_v3', 'spark'], max_health_factor: 1, min_profit_usd: 0, limit: 100 }))
        .opportunities;
    // WETH drops: $1,900 takes the at_risk positions (HF ≈ 1.05 at $2,000) below 1, $1,240 the healthy ones (≈ 1.6)
    for (const weth of DROPS.slice(0, LOOPS)) {
      const before = new Set((await liquidatableNow()).map((o) => o.borrower));
      const t0 = performance.now();
      const became = await setDevPrice(eth.rpcUrl, dev.deployment, 'WETH', weth);
      await indexer.waitForBlock(became);
      const fresh = (await liquidatableNow()).filter((o) => !before.has(o.borrower));
      const plans: LiquidationPlan[] = [];
      for (const o of fresh) {
        const plan = await planLiquidation(opts, {
          chain: 'ethereum',
          searcher: searcher.address,
          opportunity: { protocol: o.protocol, borrower: o.borrower, market: o.market!, collateral_token: o.collateral_token, debt_token: o.debt_token },
        });
        if (isPlanRefusal(plan)) rows.push([`${o.protocol} ${o.borrower.slice(0, 10)} at $${weth}`, `${became}`, '-', `refused ${plan.refused}`]);
        else plans.push(plan);
      }
      if (plans.length === 0) continue;
      // one bundle with every plan of the block (different debt tokens, so each plan's simulation holds), nonces in order
      let nonce = await client.getTransactionCount({ address: searcher.address, blockTag: 'pending' });
      const txs: Hex[] = [];
      for (const plan of plans) {
        txs.push(...(await signPlanTransactions(plan, searcher, { nonce })));
        nonce += plan.transactions.length;
      }
      await sendBundle({ rpcUrl: builder.rpcUrl, account: searcher, txs, blockNumber: became + 1n });
      const attempt = await builder.bidder.attempt();
      const ms = performance.now() - t0;
      for (const plan of plans) {
        const name = `${plan.protocol} ${plan.borrower.slice(0, 10)} at $${weth}`;
        if (attempt.included.length === 0) rows.push([name, `${became}`, '-', attempt.reason ?? 'not included']);
        else {
          blocks.push(Number(attempt.target - became));
          rows.push([name, `${became}`, `${attempt.target}`, `${attempt.target - became} (${fmt(ms, 0)} ms)`]);
        }
      }
    }
    console.log(
      `\nBlocks from "position becomes liquidatable" (WETH feed moved in block B) to "liquidated" (block L), through index → search → plan → eth_sendBundle → builder:\n`,
    );
    console.log(table(['position', 'B', 'L', 'L − B (wall ms)'], rows));
    const worst = blocks.length ? Math.max(...blocks) : Number.NaN;
    console.log(`  blocks: worst ${worst} vs best possible 1 (the next block): ${fmtRatio(ratio(worst, 1))}; ${blocks.length} positions liquidated`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
