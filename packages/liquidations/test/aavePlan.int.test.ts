import { DEV_ROLES, devAccount, devPrivateKey, setupLendingDevnet, startAnvil, type AnvilInstance, type LendingDevnet, type SeededPosition } from '@acg/devnet';
import { LiquidationPlan, type LiquidationPlanRequest } from '@acg/schemas';
import { createPublicClient, createWalletClient, encodeFunctionData, erc20Abi, http, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aavePoolAbi } from '../src/abis.js';
import { aaveMath, isPlanRefusal, planLiquidation, PLANNERS, type PlanLiquidationOptions, type ProtocolPlanner } from '../src/index.js';

/**
 * The Aave v3 / Spark planner and the plan simulation on the lending dev chain (real Aave v3.0.2
 * bytecode as Aave and as Spark; docs/liquidation-plans.md): the amount is the largest the Pool
 * allows, the simulated flows are what the transactions then really move, and every refusal.
 */
let anvil: AnvilInstance;
let dev: LendingDevnet;
let client: PublicClient;
const searcher = devAccount(DEV_ROLES.searcher).address;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 });
  dev = await setupLendingDevnet(anvil.rpcUrl);
  client = createPublicClient({ transport: http(anvil.rpcUrl), cacheTime: 0 }) as PublicClient;
});
afterAll(() => anvil?.stop());

const opts = (extra: Partial<PlanLiquidationOptions> = {}): PlanLiquidationOptions => ({ client, chain: 'ethereum', ethUsd: 2000, ...extra });
const poolOf = (p: SeededPosition) => (p.protocol === 'spark' ? dev.deployment.spark.pool : dev.deployment.aave.pool);
const requestFor = (p: SeededPosition, who: Address = searcher): LiquidationPlanRequest => ({
  chain: 'ethereum',
  searcher: who,
  opportunity: {
    protocol: p.protocol,
    borrower: p.borrower,
    market: poolOf(p),
    collateral_token: dev.deployment.tokens[p.collateral].address,
    debt_token: dev.deployment.tokens[p.debt].address,
  },
});
const seeded = (protocol: string, label: string) => dev.positions.find((p) => p.protocol === protocol && p.label === label)!;
const balanceOf = (token: Address, who: Address) => client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [who] });

/** Sends the plan's transactions from the searcher (automine: one block each) and returns the receipts. */
async function execute(plan: LiquidationPlan) {
  const wallet = createWalletClient({ account: privateKeyToAccount(devPrivateKey(DEV_ROLES.searcher)), transport: http(anvil.rpcUrl) });
  const receipts = [];
  for (const tx of plan.transactions) {
    const hash = await wallet.sendTransaction({ chain: null, to: tx.to as Address, data: tx.data as Hex, value: BigInt(tx.value), gas: BigInt(tx.gas) });
    receipts.push(await client.waitForTransactionReceipt({ hash }));
  }
  return receipts;
}

// before the per-protocol cases, which liquidate the seeded positions
describe('plan simulation and pricing', () => {
  it('would_revert names the transaction and the Pool reason when a call reverts at the target block', async () => {
    const healthy = seeded('aave_v3', 'healthy');
    const debt = dev.deployment.tokens.USDC.address;
    // a planner that liquidates a healthy position: Aave v3.0 reverts with error 45 (HEALTH_FACTOR_NOT_BELOW_THRESHOLD)
    const reckless: ProtocolPlanner = async () => ({
      protocol: 'aave_v3',
      calls: [
        {
          to: dev.deployment.aave.pool,
          data: encodeFunctionData({
            abi: aavePoolAbi,
            functionName: 'liquidationCall',
            args: [dev.deployment.tokens.WETH.address, debt, healthy.borrower, 1_000_000n, false],
          }),
          value: 0n,
          purpose: 'liquidationCall',
        },
      ],
      repay: { token: debt, amount: 1_000_000n },
      expectedSeize: [],
    });
    const r = await planLiquidation(opts({ planners: { ...PLANNERS, aave_v3: reckless } }), requestFor(healthy));
    expect(r).toMatchObject({ refused: 'would_revert', detail: expect.stringMatching(/^transactions\[0\] \(liquidationCall\) reverts at block \d+: 45$/) });
  });

  it("prices the flows with usdPrice (the index's price book) for tokens the planner's oracle did not price", async () => {
    const p = seeded('aave_v3', 'liquidatable');
    const unpriced: ProtocolPlanner = async (ctx, o) => {
      const plan = await PLANNERS.aave_v3!(ctx, o);
      if ('refused' in plan) return plan;
      const { usdPrices: _, ...rest } = plan;
      return rest;
    };
    const book: Record<string, number> = { [dev.deployment.tokens.WETH.address.toLowerCase()]: 3000, [dev.deployment.tokens.USDC.address.toLowerCase()]: 0.5 };
    const r = await planLiquidation(opts({ planners: { aave_v3: unpriced }, usdPrice: (t) => book[t.toLowerCase()] }), requestFor(p));
    if (isPlanRefusal(r)) throw new Error(`refused: ${r.refused} ${r.detail}`);
    expect(r.tokens_in[0].usd).toBeCloseTo((Number(r.tokens_in[0].amount) / 1e18) * 3000, 4);
    expect(r.tokens_out[0].usd).toBeCloseTo((Number(r.tokens_out[0].amount) / 1e6) * 0.5, 4);
  });

  it('unprofitable when the simulated flows do not pay for the gas', async () => {
    const p = seeded('aave_v3', 'at_risk');
    const debt = dev.deployment.tokens.USDC.address;
    // only an approval: no tokens move, the gas is a loss
    const idle: ProtocolPlanner = async () => ({
      protocol: 'aave_v3',
      calls: [
        { to: debt, data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [dev.deployment.aave.pool, 1n] }), value: 0n, purpose: 'approve' },
      ],
      repay: { token: debt, amount: 0n },
      expectedSeize: [],
    });
    const r = await planLiquidation(opts({ planners: { aave_v3: idle } }), requestFor(p));
    expect(r).toMatchObject({ refused: 'unprofitable', detail: expect.stringMatching(/^profit after gas is (0|-\d[\d.]*) USD \(gas \d+ units at \d+ wei/) });
  });
});

describe.each(['aave_v3', 'spark'] as const)('%s planner', (protocol) => {
  it('refuses a healthy position (not_liquidatable), a searcher without the debt asset (insufficient_balance) and an unknown market (unknown_position)', async () => {
    expect(await planLiquidation(opts(), requestFor(seeded(protocol, 'healthy')))).toMatchObject({
      refused: 'not_liquidatable',
      detail: expect.stringMatching(/health_factor 1\.\d+ is not below 1/),
    });
    const p = seeded(protocol, 'liquidatable');
    const poor = privateKeyToAccount(`0x${'42'.repeat(32)}`).address;
    expect(await planLiquidation(opts(), requestFor(p, poor))).toMatchObject({
      refused: 'insufficient_balance',
      detail: expect.stringMatching(new RegExp(`^the searcher ${poor} holds 0 base units of 0x[0-9a-fA-F]{40}; the liquidation repays \\d+$`)),
    });
    const atRisk = seeded(protocol, 'at_risk');
    expect(await planLiquidation(opts(), requestFor(atRisk, poor))).toMatchObject({ refused: 'not_liquidatable' });
    const wrong = requestFor(p);
    wrong.opportunity.market = dev.deployment.tokens.WETH.address;
    expect(await planLiquidation(opts(), wrong)).toMatchObject({ refused: 'unknown_position' });
  });

  it('plans the largest liquidationCall the v3.0 close factor allows, with the approval, and the chain then moves exactly the simulated amounts', async () => {
    const p = seeded(protocol, 'liquidatable'); // health factor ≈ 0.97: close factor 50%
    const debtToken = dev.deployment.tokens[p.debt].address;
    const collToken = dev.deployment.tokens[p.collateral].address;
    const plan = await planLiquidation(opts(), requestFor(p));
    if (isPlanRefusal(plan)) throw new Error(`refused: ${plan.refused} ${plan.detail}`);
    LiquidationPlan.parse(plan);
    expect(plan.transactions.map((t) => t.purpose)).toEqual(['approve', 'liquidationCall']);
    expect(plan.target_block).toBe(plan.based_on_block + 1);
    expect(plan.simulation).toEqual({ method: 'eth_simulateV1', block: plan.target_block });

    // 50% of the reserve debt at the planned block (percentMul, half up)
    const variableDebt = (await client.readContract({ address: poolOf(p), abi: aavePoolAbi, functionName: 'getReserveData', args: [debtToken] }))
      .variableDebtTokenAddress;
    const debtAtBlock = await client.readContract({
      address: variableDebt,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [p.borrower],
      blockNumber: BigInt(plan.based_on_block),
    });
    expect(plan.repay.amount).toBe(aaveMath.percentMul(debtAtBlock, 5_000n).toString());
    expect(plan.transactions[1].data).toBe(
      encodeFunctionData({ abi: aavePoolAbi, functionName: 'liquidationCall', args: [collToken, debtToken, p.borrower, BigInt(plan.repay.amount), false] }),
    );
    expect(plan.tokens_out).toEqual([expect.objectContaining({ token: debtToken, symbol: p.debt, amount: plan.repay.amount })]);
    expect(plan.tokens_in).toEqual([expect.objectContaining({ token: collToken, symbol: p.collateral })]);
    expect(plan.profit_usd).toBeCloseTo(plan.tokens_in[0].usd - plan.tokens_out[0].usd - plan.gas_cost_usd, 5);
    expect(plan.profit_usd).toBeGreaterThan(0);
    expect(BigInt(plan.gas_used)).toBeGreaterThan(100_000n);

    const before = { debt: await balanceOf(debtToken, searcher), coll: await balanceOf(collToken, searcher) };
    const receipts = await execute(plan);
    for (const r of receipts) expect(r.status).toBe('success');
    expect(before.debt - (await balanceOf(debtToken, searcher))).toBe(BigInt(plan.tokens_out[0].amount));
    expect((await balanceOf(collToken, searcher)) - before.coll).toBe(BigInt(plan.tokens_in[0].amount));
    // the approval was exact: nothing is left approved to the Pool
    expect(await client.readContract({ address: debtToken, abi: erc20Abi, functionName: 'allowance', args: [searcher, poolOf(p)] })).toBe(0n);
  });

  it('takes 100% of the reserve debt below health factor 0.95, and then refuses the repaid position (not_liquidatable)', async () => {
    const p = seeded(protocol, 'deeply_liquidatable'); // ≈ 0.9
    const plan = await planLiquidation(opts(), requestFor(p));
    if (isPlanRefusal(plan)) throw new Error(`refused: ${plan.refused} ${plan.detail}`);
    const debtToken = dev.deployment.tokens[p.debt].address;
    const variableDebt = (await client.readContract({ address: poolOf(p), abi: aavePoolAbi, functionName: 'getReserveData', args: [debtToken] }))
      .variableDebtTokenAddress;
    const debtAtBlock = await client.readContract({
      address: variableDebt,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [p.borrower],
      blockNumber: BigInt(plan.based_on_block),
    });
    expect(plan.repay.amount).toBe(debtAtBlock.toString());
    for (const r of await execute(plan)) expect(r.status).toBe('success');
    const again = await planLiquidation(opts(), requestFor(p));
    expect(again).toMatchObject({ refused: 'not_liquidatable' });
  });
});
