import { builderConfigFromEnv, startBuilder, startDevRelays, type RunningBuilder } from '@acg/builder';
import {
  DEV_ROLES,
  devAccount,
  lendingIndexerConfig,
  setDevPrice,
  setupLendingDevnet,
  startEthereumDevChain,
  usdcBalance,
  type AnvilInstance,
  type LendingDevnet,
} from '@acg/devnet';
import { startLiquidationIndexer, type LiquidationIndexer } from '@acg/liquidations';
import { LiquidationPlan, type LendingProtocol } from '@acg/schemas';
import { ulid } from 'ulid';
import { createPublicClient, erc20Abi, http, keccak256, type Address, type Hex, type PublicClient } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayClient } from '../../../packages/sdk/src/client.js';
import { GatewayError } from '../../../packages/sdk/src/errors.js';
import { startTestGateway, type TestGateway } from './harness.js';

/**
 * The searcher's loop on the Ethereum dev chain (issue 37 item 2, docs/liquidation-plans.md): a
 * position becomes liquidatable (the WETH feed moves) → the search shows it → the plan is bought
 * (x402) → the searcher (dev account 9, `DEV_ROLES.searcher`, holding the debt assets) signs it →
 * `eth_sendBundle` to our builder → the builder's block lands → the position leaves the index and
 * the searcher's token balances moved by exactly the simulated `tokens_in` / `tokens_out`.
 * One case per protocol; Compound v3 and Morpho Blue join when their planners land.
 */
let eth: AnvilInstance;
let gw: TestGateway;
let dev: LendingDevnet;
let indexer: LiquidationIndexer;
let builder: RunningBuilder;
let relays: Awaited<ReturnType<typeof startDevRelays>>;
let client: PublicClient;

beforeAll(async () => {
  eth = await startEthereumDevChain();
  gw = await startTestGateway({ prober: false, config: { chains: { ethereum: eth.rpcUrl } } });
  dev = await setupLendingDevnet(eth.rpcUrl);
  client = createPublicClient({ transport: http(eth.rpcUrl), cacheTime: 0 }) as PublicClient;
  indexer = await startLiquidationIndexer({
    chain: 'ethereum',
    rpcUrl: eth.rpcUrl,
    redis: gw.stack.redis.url,
    keyPrefix: gw.config.keyPrefix,
    pollIntervalMs: 50,
    ...lendingIndexerConfig(dev.deployment),
  });
  relays = await startDevRelays({ ethereumRpcUrl: eth.rpcUrl });
  builder = await startBuilder(
    builderConfigFromEnv(
      {},
      {
        port: 0,
        redisUrl: gw.stack.redis.url,
        keyPrefix: `acg:test:${ulid()}:`,
        ethereumRpcUrl: eth.rpcUrl,
        relays: relays.relays.map((r) => ({ name: r.name, url: r.url })),
        blsSecretKey: `0x${'22'.repeat(32)}`,
        coinbasePrivateKey: `0x${'33'.repeat(32)}`,
        devMining: true,
        slotMs: 0,
        headPollMs: 0,
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      },
    ),
    // the test runs each build attempt itself (what the head watcher does on a new head)
    { bidder: false },
  );
}, 240_000);

afterAll(async () => {
  await indexer?.stop();
  await builder?.close();
  await relays?.close();
  await gw?.close();
  await eth?.stop();
});

const searcher = devAccount(DEV_ROLES.searcher);
/** The searcher pays the gateway on the payment chain with the same key (dev account 9 is also the last buyer there). */
const sdk = () => createGatewayClient({ baseUrl: gw.url, account: gw.stack.payment.buyers[7], builderRpcUrl: builder.rpcUrl });
const balanceAt = (token: Address, blockNumber: bigint) =>
  client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [searcher.address], blockNumber });

/** WETH price per case: each moves the feed down so that the protocol's `at_risk` position (health factor ≈ 1.05 at $2,000) falls below 1. */
const CASES: { protocol: LendingProtocol; wethUsd: number }[] = [
  { protocol: 'aave_v3', wethUsd: 1900 },
  { protocol: 'spark', wethUsd: 1880 },
  { protocol: 'compound_v3', wethUsd: 1860 },
  { protocol: 'morpho_blue', wethUsd: 1840 },
];

describe.each(CASES)('$protocol: search → plan → sign → eth_sendBundle → landed', ({ protocol, wethUsd }) => {
  it('liquidates the position in the next block, it leaves the index, and the balances move by the simulated amounts to the base unit', async () => {
    expect(buyerIsSearcher()).toBe(true);
    const position = dev.positions.find((p) => p.protocol === protocol && p.label === 'at_risk')!;
    const becameLiquidatable = await setDevPrice(eth.rpcUrl, dev.deployment, 'WETH', wethUsd);
    await indexer.waitForBlock(becameLiquidatable);

    const gateway = sdk();
    const found = await gateway.liquidations.search({ protocol: [protocol], max_health_factor: 1, limit: 50 });
    const opportunity = found.opportunities.find((o) => o.borrower === position.borrower);
    expect(opportunity, JSON.stringify(found)).toBeDefined();

    const plan = LiquidationPlan.parse(await gateway.liquidations.plan(opportunity!, { searcher: searcher.address }));
    expect(plan.based_on_block).toBe(Number(becameLiquidatable));
    expect(plan.protocol).toBe(protocol);
    expect(plan.profit_usd).toBeGreaterThan(0);

    const sent = await gateway.bundles.send(plan, searcher, { ethereumRpcUrl: eth.rpcUrl });
    expect(sent.blockNumber).toBe(`0x${plan.target_block.toString(16)}`);
    const attempt = await builder.bidder.attempt();
    expect(attempt.included, attempt.reason).toEqual([sent.bundleHash]);

    // landed: the target block holds the plan's transactions, in order, each successful
    const landed = await client.getBlock({ blockNumber: BigInt(plan.target_block) });
    const hashes = sent.txs.map((raw: Hex) => keccak256(raw));
    expect(landed.transactions.slice(0, hashes.length)).toEqual(hashes);
    for (const h of hashes) expect((await client.getTransactionReceipt({ hash: h })).status).toBe('success');
    expect(Number(landed.number) - Number(becameLiquidatable)).toBeLessThanOrEqual(2);

    // the searcher's balances moved by exactly the simulated flows (gas is ETH, not a token flow)
    const before = BigInt(plan.based_on_block);
    const after = BigInt(plan.target_block);
    const tokens = new Set([...plan.tokens_in, ...plan.tokens_out].map((f) => f.token));
    for (const token of tokens) {
      const inflow = plan.tokens_in.filter((f) => f.token === token).reduce((s, f) => s + BigInt(f.amount), 0n);
      const outflow = plan.tokens_out.filter((f) => f.token === token).reduce((s, f) => s + BigInt(f.amount), 0n);
      expect((await balanceAt(token as Address, after)) - (await balanceAt(token as Address, before)), token).toBe(inflow - outflow);
    }

    // the position leaves the index (not liquidatable any more)
    await indexer.waitForBlock(after);
    const later = await gateway.liquidations.search({ protocol: [protocol], max_health_factor: 1, limit: 50 });
    expect(later.opportunities.map((o) => o.borrower)).not.toContain(position.borrower);

    // attacker: a plan for the position just liquidated costs nothing (422 before any payment)
    const spent = gateway.spent().baseUnits;
    const usdcBefore = await usdcBalance(gw.stack.payment.rpcUrl, gw.stack.payment.buyers[7].address);
    const again = await gateway.liquidations.plan(opportunity!, { searcher: searcher.address }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(GatewayError);
    expect((again as GatewayError).status).toBe(422);
    expect((again as GatewayError).problem.reason).toBe('not_liquidatable');
    expect(gateway.spent().baseUnits).toBe(spent);
    expect(await usdcBalance(gw.stack.payment.rpcUrl, gw.stack.payment.buyers[7].address)).toBe(usdcBefore);
  });
});

describe('plans refused before payment cost nothing', () => {
  it('a healthy position, an unknown position and a searcher without the debt asset answer 422 with the refusal code, nothing paid', async () => {
    const gateway = sdk();
    const healthy = dev.positions.find((p) => p.protocol === 'aave_v3' && p.label === 'healthy')!;
    const opportunity = {
      protocol: 'aave_v3' as const,
      borrower: healthy.borrower,
      market: dev.deployment.aave.pool,
      collateral_token: dev.deployment.tokens.WETH.address,
      debt_token: dev.deployment.tokens.USDC.address,
    };
    const usdcBefore = await usdcBalance(gw.stack.payment.rpcUrl, gw.stack.payment.buyers[7].address);
    const codeOf = async (p: Promise<unknown>) => {
      const e = await p.catch((x: unknown) => x);
      expect(e).toBeInstanceOf(GatewayError);
      expect((e as GatewayError).status).toBe(422);
      return (e as GatewayError).problem.reason;
    };
    expect(await codeOf(gateway.liquidations.plan(opportunity, { searcher: searcher.address }))).toBe('not_liquidatable');
    expect(await codeOf(gateway.liquidations.plan({ ...opportunity, market: dev.deployment.tokens.DAI.address }, { searcher: searcher.address }))).toBe(
      'unknown_position',
    );
    const liquidatable = dev.positions.find((p) => p.protocol === 'aave_v3' && p.label === 'liquidatable')!;
    const poor = devAccount(8).address; // holds no USDC on the Ethereum dev chain
    expect(await codeOf(gateway.liquidations.plan({ ...opportunity, borrower: liquidatable.borrower }, { searcher: poor }))).toBe('insufficient_balance');
    expect(gateway.spent().baseUnits).toBe(0n);
    expect(await usdcBalance(gw.stack.payment.rpcUrl, gw.stack.payment.buyers[7].address)).toBe(usdcBefore);
  });
});

describe('through POST /api/v1/execute the refusal comes from the run, after payment, and is refunded', () => {
  it('a plan for a healthy position fails with its reason as the error code and a refund of the whole payment', async () => {
    const gateway = createGatewayClient({ baseUrl: gw.url, account: gw.stack.payment.buyers[6] });
    const healthy = dev.positions.find((p) => p.protocol === 'spark' && p.label === 'healthy')!;
    const input = {
      searcher: searcher.address,
      opportunity: {
        protocol: 'spark',
        borrower: healthy.borrower,
        market: dev.deployment.spark.pool,
        collateral_token: dev.deployment.tokens.WETH.address,
        debt_token: dev.deployment.tokens.DAI.address,
      },
    };
    const e = await gateway.execute('mev.liquidation_plan', input).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GatewayError);
    const err = e as GatewayError;
    // the execute path's failure after payment: 502 with the capability's error code, and the payment refunded
    expect(err.status, JSON.stringify(err.problem)).toBe(502);
    expect(err.problem.error).toMatchObject({ code: 'not_liquidatable', message: expect.stringMatching(/health_factor 1\.\d+ is not below 1/) });
    expect(err.executionId).toMatch(/^exe_/);
    expect(err.refund).toMatchObject({ amount: '50000' });
  });
});

function buyerIsSearcher(): boolean {
  return gw.stack.payment.buyers[7].address === searcher.address;
}
