import {
  compileLendingContracts,
  devAccount,
  DevSender,
  devPrivateKey,
  setDevPrice,
  setupLendingDevnet,
  startAnvil,
  type AnvilInstance,
  type DevTokenSymbol,
  type LendingDevnet,
  type SeededPosition,
  type SeedLabel,
} from '@acg/devnet';
import type { LiquidationPlanOpportunity } from '@acg/schemas';
import {
  createPublicClient,
  decodeEventLog,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  http,
  keccak256,
  maxUint256,
  parseUnits,
  stringToHex,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cometAbi, morphoAbi } from '../src/abis.js';
import { cometAbsorb, cometDiscountedPrice } from '../src/math/comet.js';
import { cometPlanner } from '../src/plans/comet.js';
import { morphoPlanner } from '../src/plans/morpho.js';
import type { PlanContext, PlanRefusal, ProtocolPlan, ProtocolPlanner } from '../src/plans/types.js';

/**
 * The Compound v3 and Morpho Blue planners on the dev chain (docs/liquidation-plans.md): real
 * Morpho Blue and our Comet (`@acg/devnet` lending data), seeded liquidatable positions. Each plan is
 * signed by a funded dev searcher, its transactions are mined together in the target block at the
 * timestamp the plan assumed, and the test checks the position is gone and the searcher's token
 * balances moved by exactly `repay` and `expectedSeize`. Scenarios that change prices or reserves
 * run inside an anvil snapshot and are reverted.
 */
let anvil: AnvilInstance;
let dev: LendingDevnet;
let client: PublicClient;
let tx: DevSender;
const searcher = privateKeyToAccount(devPrivateKey(7));
const poorSearcher = devAccount(8).address;
const SEARCHER_USDC = parseUnits('1000000', 6);

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 });
  dev = await setupLendingDevnet(anvil.rpcUrl);
  client = createPublicClient({ transport: http(anvil.rpcUrl) }) as PublicClient;
  tx = new DevSender(anvil.rpcUrl);
  await tx.write(dev.deployment.deployer, dev.deployment.tokens.USDC.address, compileLendingContracts().DevToken.abi, 'mint', [
    searcher.address,
    SEARCHER_USDC,
  ]);
});

afterAll(async () => {
  await anvil?.stop();
});

const rpc = (method: string, params: unknown[] = []) => tx.request(method, params);
const token = (s: DevTokenSymbol) => dev.deployment.tokens[s].address;
const seeded = (protocol: SeededPosition['protocol'], label: SeedLabel, collateral: DevTokenSymbol = 'WETH') =>
  dev.positions.find((p) => p.protocol === protocol && p.label === label && p.collateral === collateral)!;

function cometOpportunity(borrower: Address, collateral: DevTokenSymbol = 'WETH'): LiquidationPlanOpportunity {
  return { protocol: 'compound_v3', borrower, market: dev.deployment.comet.address, collateral_token: token(collateral), debt_token: token('USDC') };
}

function morphoOpportunity(p: SeededPosition): LiquidationPlanOpportunity {
  return {
    protocol: 'morpho_blue',
    borrower: p.borrower,
    market: dev.deployment.morpho.address,
    collateral_token: token(p.collateral),
    debt_token: token('USDC'),
    market_id: p.marketId,
  };
}

/** The plan context of the next block: the head's state, 12 s later. */
async function nextBlockContext(who: Address = searcher.address): Promise<PlanContext> {
  const head = await client.getBlock({ blockTag: 'latest' });
  return { client, blockNumber: head.number, timestamp: head.timestamp + 12n, searcher: who };
}

async function plan(planner: ProtocolPlanner, opportunity: LiquidationPlanOpportunity, who?: Address) {
  const ctx = await nextBlockContext(who);
  return { ctx, result: await planner(ctx, opportunity) };
}

function expectPlan(r: ProtocolPlan | PlanRefusal): ProtocolPlan {
  if ('refused' in r) throw new Error(`refused: ${r.refused}: ${r.detail}`);
  return r;
}

/**
 * Signs the plan's calls as the searcher (EIP-1559, consecutive nonces) and mines them together as
 * block `ctx.blockNumber + 1` at `ctx.timestamp`; returns their receipts (all must succeed).
 */
async function execute(ctx: PlanContext, p: ProtocolPlan): Promise<TransactionReceipt[]> {
  const head = await client.getBlock({ blockTag: 'latest' });
  expect(head.number).toBe(ctx.blockNumber);
  const nonce = await client.getTransactionCount({ address: searcher.address, blockTag: 'latest' });
  const maxPriorityFeePerGas = 10n ** 9n;
  const maxFeePerGas = 2n * (head.baseFeePerGas ?? 0n) + maxPriorityFeePerGas;
  await rpc('evm_setAutomine', [false]);
  const hashes: Hex[] = [];
  try {
    for (const [i, call] of p.calls.entries()) {
      const raw = await searcher.signTransaction({
        chainId: 1,
        type: 'eip1559',
        nonce: nonce + i,
        to: call.to,
        data: call.data,
        value: call.value,
        gas: 1_500_000n,
        maxFeePerGas,
        maxPriorityFeePerGas,
      });
      hashes.push((await rpc('eth_sendRawTransaction', [raw])) as Hex);
    }
    await rpc('evm_setNextBlockTimestamp', [Number(ctx.timestamp)]);
    await rpc('evm_mine');
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  const receipts = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash })));
  for (const [i, r] of receipts.entries()) {
    expect(r.status, `${p.calls[i].purpose} reverted`).toBe('success');
    expect(r.blockNumber).toBe(ctx.blockNumber + 1n);
    expect(r.transactionIndex).toBe(i);
  }
  return receipts;
}

const balanceOf = (t: Address, who: Address, blockNumber: bigint) =>
  client.readContract({ address: t, abi: erc20Abi, functionName: 'balanceOf', args: [who], blockNumber });

/** The searcher's USDC allowance to `spender` at a block. */
const allowance = (spender: Address, blockNumber: bigint) =>
  client.readContract({ address: token('USDC'), abi: erc20Abi, functionName: 'allowance', args: [searcher.address, spender], blockNumber });

/** The searcher's balance change of `t` from the block before the plan to the block it landed in. */
const delta = async (t: Address, ctx: PlanContext) =>
  (await balanceOf(t, ctx.searcher, ctx.blockNumber + 1n)) - (await balanceOf(t, ctx.searcher, ctx.blockNumber));

async function inSnapshot(run: () => Promise<void>): Promise<void> {
  const id = await rpc('evm_snapshot');
  try {
    await run();
  } finally {
    expect(await rpc('evm_revert', [id])).toBe(true);
  }
}

describe('Compound v3 planner on the dev Comet', () => {
  it('absorbs a liquidatable position and buys its collateral: balances move by repay and expectedSeize to the base unit', async () => {
    const p = seeded('compound_v3', 'liquidatable');
    const comet = dev.deployment.comet.address;
    const { ctx, result } = await plan(cometPlanner, cometOpportunity(p.borrower));
    const out = expectPlan(result);
    expect(out.calls.map((c) => c.purpose)).toEqual(['approve', 'absorb', 'buyCollateral']);
    expect(out.repay.token).toBe(token('USDC'));
    expect(out.expectedSeize).toHaveLength(1);
    expect(out.expectedSeize[0].token).toBe(token('WETH'));
    const seized = await client.readContract({ address: comet, abi: cometAbi, functionName: 'collateralBalanceOf', args: [p.borrower, token('WETH')] });
    // all of the borrower's WETH but less than one USDC unit's worth, at the protocol's own quote
    expect(out.expectedSeize[0].amount).toBeLessThanOrEqual(seized);
    expect(seized - out.expectedSeize[0].amount).toBeLessThan(10n ** 9n);
    expect(
      await client.readContract({
        address: comet,
        abi: cometAbi,
        functionName: 'quoteCollateral',
        args: [token('WETH'), out.repay.amount],
        blockNumber: ctx.blockNumber,
      }),
    ).toBe(out.expectedSeize[0].amount);

    const receipts = await execute(ctx, out);
    const absorbLogs = receipts[1].logs.flatMap((l) => {
      try {
        return [decodeEventLog({ abi: cometAbi, data: l.data, topics: l.topics })];
      } catch {
        return [];
      }
    });
    expect(absorbLogs.map((l) => l.eventName)).toEqual(['AbsorbCollateral', 'AbsorbDebt']);
    const after = ctx.blockNumber + 1n;
    const [principal] = await client.readContract({ address: comet, abi: cometAbi, functionName: 'userBasic', args: [p.borrower], blockNumber: after });
    expect(principal).toBeGreaterThanOrEqual(0n);
    expect(
      await client.readContract({ address: comet, abi: cometAbi, functionName: 'collateralBalanceOf', args: [p.borrower, token('WETH')], blockNumber: after }),
    ).toBe(0n);
    expect(await delta(token('USDC'), ctx)).toBe(-out.repay.amount);
    expect(await delta(token('WETH'), ctx)).toBe(out.expectedSeize[0].amount);
    // the approval was for the exact amount the buys took
    expect(await allowance(comet, after)).toBe(0n);

    // already absorbed: refused
    const again = (await plan(cometPlanner, cometOpportunity(p.borrower))).result;
    expect(again).toMatchObject({ refused: 'not_liquidatable' });
  });

  it('refuses a healthy position, a searcher without base, and an opportunity that is not this Comet’s', async () => {
    expect((await plan(cometPlanner, cometOpportunity(seeded('compound_v3', 'healthy').borrower))).result).toMatchObject({ refused: 'not_liquidatable' });
    expect((await plan(cometPlanner, cometOpportunity(seeded('compound_v3', 'at_risk', 'WBTC').borrower, 'WBTC'))).result).toMatchObject({
      refused: 'not_liquidatable',
    });
    const deep = seeded('compound_v3', 'deeply_liquidatable').borrower;
    expect((await plan(cometPlanner, cometOpportunity(deep), poorSearcher)).result).toMatchObject({ refused: 'insufficient_balance' });
    expect((await plan(cometPlanner, { ...cometOpportunity(deep), debt_token: token('DAI') })).result).toMatchObject({ refused: 'unknown_position' });
    expect((await plan(cometPlanner, { ...cometOpportunity(deep), collateral_token: token('DAI') })).result).toMatchObject({ refused: 'unknown_position' });
    expect((await plan(cometPlanner, { ...cometOpportunity(deep), market: dev.deployment.morpho.address })).result).toMatchObject({
      refused: 'unknown_position',
    });
  });

  it('reserves at or above targetReserves after the absorb: the plan is the absorb alone, and nothing was for sale', async () => {
    await inSnapshot(async () => {
      const p = seeded('compound_v3', 'deeply_liquidatable');
      const comet = dev.deployment.comet.address;
      // fill the reserves: a direct transfer of base raises `balance − supply + borrow`
      const target = await client.readContract({ address: comet, abi: cometAbi, functionName: 'targetReserves' });
      await tx.write(dev.deployment.deployer, token('USDC'), compileLendingContracts().DevToken.abi, 'mint', [comet, target + parseUnits('1000000', 6)]);
      const { ctx, result } = await plan(cometPlanner, cometOpportunity(p.borrower));
      const out = expectPlan(result);
      expect(out.calls.map((c) => c.purpose)).toEqual(['absorb']);
      expect(out.repay.amount).toBe(0n);
      expect(out.expectedSeize).toEqual([]);
      await execute(ctx, out);
      const [principal] = await client.readContract({ address: comet, abi: cometAbi, functionName: 'userBasic', args: [p.borrower] });
      expect(principal).toBeGreaterThanOrEqual(0n);
      expect(await delta(token('USDC'), ctx)).toBe(0n);
      expect(await delta(token('WETH'), ctx)).toBe(0n);
      // the protocol agrees: the seized WETH is not for sale
      await expect(
        client.call({
          account: searcher.address,
          to: comet,
          data: encodeFunctionData({ abi: cometAbi, functionName: 'buyCollateral', args: [token('WETH'), 0n, 10n ** 6n, searcher.address] }),
        }),
      ).rejects.toThrow();
    });
  });

  it('two collateral assets: the larger discount is bought first, and the reserves it adds stop the second buy', async () => {
    await inSnapshot(async () => {
      const C = compileLendingContracts();
      const comet = dev.deployment.comet.address;
      const borrower = getAddress(`0x${keccak256(stringToHex('acg-plans-two-assets')).slice(26)}`);
      await tx.fund(borrower);
      for (const [s, amount] of [
        ['WETH', parseUnits('10', 18)],
        ['WBTC', parseUnits('0.5', 8)],
      ] as const) {
        await tx.write(dev.deployment.deployer, token(s), C.DevToken.abi, 'mint', [borrower, amount]);
        await tx.write(borrower, token(s), erc20Abi, 'approve', [comet, maxUint256]);
        await tx.write(borrower, comet, C.DevComet.abi, 'supply', [token(s), amount]);
      }
      // 20,000 USD of WETH and 30,000 of WBTC borrow up to 39,000; at WETH 1,500 the position is liquidatable
      await tx.write(borrower, comet, C.DevComet.abi, 'withdraw', [token('USDC'), parseUnits('38000', 6)]);
      await setDevPrice(anvil.rpcUrl, dev.deployment, 'WETH', 1_500);
      expect(await client.readContract({ address: comet, abi: cometAbi, functionName: 'isLiquidatable', args: [borrower] })).toBe(true);

      // reserves after the absorb: 14,000 USDC below the target, less than the WBTC buy (29,100) adds
      const ctx0 = await nextBlockContext();
      const at = { blockNumber: ctx0.blockNumber, blockOverrides: { time: ctx0.timestamp } } as const;
      const read = (functionName: 'getReserves' | 'targetReserves' | 'borrowBalanceOf', args: readonly Address[] = []) =>
        client.readContract({ address: comet, abi: cometAbi, functionName, args, ...at } as never) as Promise<bigint>;
      const [reserves, target, debt] = [await read('getReserves'), await read('targetReserves'), await read('borrowBalanceOf', [borrower])];
      const lf = 95n * 10n ** 16n;
      const drop = cometAbsorb(debt, 10n ** 8n, 10n ** 6n, [
        { asset: 'WETH', balance: parseUnits('10', 18), price: 1_500n * 10n ** 8n, scale: 10n ** 18n, liquidationFactor: lf },
        { asset: 'WBTC', balance: parseUnits('0.5', 8), price: 60_000n * 10n ** 8n, scale: 10n ** 8n, liquidationFactor: lf },
      ]).reservesDrop;
      await tx.write(dev.deployment.deployer, token('USDC'), C.DevToken.abi, 'mint', [comet, target - parseUnits('14000', 6) + drop - reserves]);

      const { ctx, result } = await plan(cometPlanner, cometOpportunity(borrower));
      const out = expectPlan(result);
      expect(out.calls.map((c) => c.purpose)).toEqual(['approve', 'absorb', 'buyCollateral']);
      expect(out.expectedSeize.map((s) => s.token)).toEqual([token('WBTC')]);
      // 0.5 WBTC at 60,000 × 0.97
      expect(cometDiscountedPrice({ price: 60_000n * 10n ** 8n, liquidationFactor: lf }, 6n * 10n ** 17n)).toBe(58_200n * 10n ** 8n);
      expect(out.repay.amount).toBe(parseUnits('29100', 6));
      expect(out.expectedSeize[0].amount).toBe(parseUnits('0.5', 8));
      await execute(ctx, out);
      expect(await delta(token('USDC'), ctx)).toBe(-out.repay.amount);
      expect(await delta(token('WBTC'), ctx)).toBe(out.expectedSeize[0].amount);
      expect(await delta(token('WETH'), ctx)).toBe(0n);
      // the WETH left is not for sale any more: the planner was right to stop
      await expect(
        client.call({
          account: searcher.address,
          to: comet,
          data: encodeFunctionData({ abi: cometAbi, functionName: 'buyCollateral', args: [token('WETH'), 0n, 10n ** 6n, searcher.address] }),
        }),
      ).rejects.toThrow();
    });
  });
});

describe('Morpho Blue planner on the dev Morpho', () => {
  const position = (p: SeededPosition, blockNumber?: bigint) =>
    client.readContract({ address: dev.deployment.morpho.address, abi: morphoAbi, functionName: 'position', args: [p.marketId!, p.borrower], blockNumber });

  /** The Liquidate event of a receipt. */
  const liquidateEvent = (r: TransactionReceipt) =>
    r.logs
      .flatMap((l) => {
        try {
          return [decodeEventLog({ abi: morphoAbi, data: l.data, topics: l.topics })];
        } catch {
          return [];
        }
      })
      .find((l) => l.eventName === 'Liquidate')!.args as {
      repaidAssets: bigint;
      repaidShares: bigint;
      seizedAssets: bigint;
      badDebtAssets: bigint;
      badDebtShares: bigint;
    };

  it('repays all the debt of a liquidatable position, interest accrued to the target block: balances move by repay and expectedSeize', async () => {
    const p = seeded('morpho_blue', 'liquidatable');
    const [, shares, collateral] = await position(p);
    const { ctx, result } = await plan(morphoPlanner, morphoOpportunity(p));
    const out = expectPlan(result);
    expect(out.calls.map((c) => c.purpose)).toEqual(['approve', 'liquidate']);
    expect(out.repay.token).toBe(token('USDC'));
    expect(out.expectedSeize).toEqual([{ token: token('WETH'), amount: expect.any(BigInt) }]);
    expect(out.expectedSeize[0].amount).toBeLessThan(collateral);

    const receipts = await execute(ctx, out);
    const ev = liquidateEvent(receipts[1]);
    expect(ev.repaidShares).toBe(shares);
    expect(ev.repaidAssets).toBe(out.repay.amount);
    expect(ev.seizedAssets).toBe(out.expectedSeize[0].amount);
    expect(ev.badDebtShares).toBe(0n);
    const [, sharesAfter, collateralAfter] = await position(p, ctx.blockNumber + 1n);
    expect(sharesAfter).toBe(0n);
    expect(collateralAfter).toBe(collateral - out.expectedSeize[0].amount);
    expect(await delta(token('USDC'), ctx)).toBe(-out.repay.amount);
    expect(await delta(token('WETH'), ctx)).toBe(out.expectedSeize[0].amount);
    // the approval covered two more minutes of interest, and no more
    const left = await allowance(dev.deployment.morpho.address, ctx.blockNumber + 1n);
    expect(left).toBeGreaterThan(0n);
    expect(left).toBeLessThan(out.repay.amount / 10_000n);

    // already liquidated: refused
    expect((await plan(morphoPlanner, morphoOpportunity(p))).result).toMatchObject({ refused: 'not_liquidatable' });
  });

  it('bad debt: seizes all the collateral when it is short, no approval when the allowance suffices', async () => {
    await inSnapshot(async () => {
      const p = seeded('morpho_blue', 'deeply_liquidatable');
      await setDevPrice(anvil.rpcUrl, dev.deployment, 'WETH', 1_500);
      await tx.write(searcher.address, token('USDC'), erc20Abi, 'approve', [dev.deployment.morpho.address, maxUint256]);
      const [, shares, collateral] = await position(p);
      const { ctx, result } = await plan(morphoPlanner, morphoOpportunity(p));
      const out = expectPlan(result);
      expect(out.calls.map((c) => c.purpose)).toEqual(['liquidate']);
      expect(out.expectedSeize).toEqual([{ token: token('WETH'), amount: collateral }]);

      const [receipt] = await execute(ctx, out);
      const ev = liquidateEvent(receipt);
      expect(ev.seizedAssets).toBe(collateral);
      expect(ev.repaidAssets).toBe(out.repay.amount);
      expect(ev.badDebtShares).toBe(shares - ev.repaidShares);
      expect(ev.badDebtShares).toBeGreaterThan(0n);
      expect(await position(p, ctx.blockNumber + 1n)).toEqual([0n, 0n, 0n]);
      expect(await delta(token('USDC'), ctx)).toBe(-out.repay.amount);
      expect(await delta(token('WETH'), ctx)).toBe(collateral);
      expect((await plan(morphoPlanner, morphoOpportunity(p))).result).toMatchObject({ refused: 'not_liquidatable' });
    });
  });

  it('refuses a healthy position, a searcher without the loan token, and a market that is not the opportunity’s', async () => {
    expect((await plan(morphoPlanner, morphoOpportunity(seeded('morpho_blue', 'healthy')))).result).toMatchObject({ refused: 'not_liquidatable' });
    expect((await plan(morphoPlanner, morphoOpportunity(seeded('morpho_blue', 'at_risk', 'WBTC')))).result).toMatchObject({ refused: 'not_liquidatable' });
    const deep = seeded('morpho_blue', 'deeply_liquidatable');
    expect((await plan(morphoPlanner, morphoOpportunity(deep), poorSearcher)).result).toMatchObject({ refused: 'insufficient_balance' });
    expect((await plan(morphoPlanner, { ...morphoOpportunity(deep), market_id: keccak256(stringToHex('no such market')) })).result).toMatchObject({
      refused: 'unknown_position',
    });
    expect((await plan(morphoPlanner, { ...morphoOpportunity(deep), collateral_token: token('WBTC') })).result).toMatchObject({ refused: 'unknown_position' });
    const { market_id: _, ...withoutId } = morphoOpportunity(deep);
    expect((await plan(morphoPlanner, withoutId)).result).toMatchObject({ refused: 'unknown_position' });
  });
});
