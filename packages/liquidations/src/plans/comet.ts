import { encodeFunctionData, erc20Abi, getAddress, zeroAddress, type Address } from 'viem';
import { cometAbi } from '../abis.js';
import { cometAbsorb, cometPlanBuys, type CometSeizedCollateral } from '../math/comet.js';
import type { Read } from '../multicall.js';
import { readAtTarget } from './atTarget.js';
import type { PlannedCall, PlanRefusal, ProtocolPlanner } from './types.js';

/** `getAssetInfo(i)` slots read at once: Comet's `MAX_ASSETS` (an index past `numAssets` reverts `BadAsset` and is ignored). */
const MAX_ASSETS = 24;
/** `totalsBasic().pauseFlags` bits (CometCore `PAUSE_ABSORB_OFFSET`, `PAUSE_BUY_OFFSET`). */
const PAUSE_ABSORB = 1 << 3;
const PAUSE_BUY = 1 << 4;

type AssetInfo = { offset: number; asset: Address; priceFeed: Address; scale: bigint; liquidationFactor: bigint };
type Totals = { pauseFlags: number };
type UserBasic = readonly [principal: bigint, baseTrackingIndex: bigint, baseTrackingAccrued: bigint, assetsIn: number, reserved: number];

const refuse = (refused: PlanRefusal['refused'], detail: string): PlanRefusal => ({ refused, detail });

/**
 * Compound III (Comet) planner (docs/liquidation-plans.md "Compound v3"; the math and its sources in
 * `math/comet.ts`). Reads the Comet at the target block (state of `ctx.blockNumber`, timestamp
 * `ctx.timestamp`, {@link readAtTarget}) and plans, in order:
 * 1. `approve(comet, baseTotal)` on the base token, when the searcher's allowance is below it;
 * 2. `absorb(searcher, [borrower])`: the protocol takes the whole position (no close factor);
 * 3. `buyCollateral(asset, minAmount = quote, baseAmount, recipient = searcher)` for each seized
 *    asset, the largest discount first, while the reserves after the absorb (and after the buys
 *    before it) are below `targetReserves` ({@link cometPlanBuys}); each buys all but dust of what
 *    the borrower held, at the store-front price (`quoteCollateral`).
 *
 * `repay` = base token, the base paid for the collateral (the protocol itself writes the debt off);
 * `expectedSeize` = each asset bought, `quoteCollateral(asset, baseAmount)`. When the reserves are
 * at or above `targetReserves` (or buying is paused) the plan is the `absorb` alone, with `repay` 0
 * and nothing seized: the absorber gets no tokens, so the profit check refuses it as `unprofitable`.
 *
 * Refusals: `unknown_position` (the market is not a Comet, `debt_token` is not its base token, or
 * `collateral_token` is not one of its assets; the absorb takes every asset, whichever is named),
 * `not_liquidatable` (no borrow, e.g. already absorbed; `isLiquidatable` false; no collateral),
 * `would_revert` (absorb paused), `insufficient_balance` (the searcher holds less base than the buys cost).
 */
export const cometPlanner: ProtocolPlanner = async (ctx, opportunity) => {
  if (opportunity.protocol !== 'compound_v3') return refuse('unknown_position', `the Comet planner plans compound_v3, not ${opportunity.protocol}`);
  const comet = getAddress(opportunity.market);
  const borrower = getAddress(opportunity.borrower);
  const searcher = getAddress(ctx.searcher);
  const c = (functionName: string, args?: readonly unknown[]): Read => ({ address: comet, abi: cometAbi, functionName, args });

  const head = await readAtTarget(ctx, [
    c('baseToken'),
    c('baseTokenPriceFeed'),
    c('baseScale'),
    c('storeFrontPriceFactor'),
    c('targetReserves'),
    c('totalsBasic'),
    c('userBasic', [borrower]),
    c('isLiquidatable', [borrower]),
    c('borrowBalanceOf', [borrower]),
    c('getReserves'),
    ...Array.from({ length: MAX_ASSETS }, (_, i) => c('getAssetInfo', [i])),
  ]);
  const [baseToken, baseFeed, baseScale, storeFront, targetReserves, totals, user, liquidatable, borrowBalance, reserves] = head as [
    Address | undefined,
    Address | undefined,
    bigint | undefined,
    bigint | undefined,
    bigint | undefined,
    Totals | undefined,
    UserBasic | undefined,
    boolean | undefined,
    bigint | undefined,
    bigint | undefined,
  ];
  if (!baseToken || !baseFeed || !baseScale || storeFront === undefined || targetReserves === undefined || !totals || !user || reserves === undefined) {
    return refuse('unknown_position', `${comet} does not answer as a Comet at block ${ctx.blockNumber}`);
  }
  if (getAddress(opportunity.debt_token) !== getAddress(baseToken)) {
    return refuse('unknown_position', `debt_token ${opportunity.debt_token} is not the base token ${getAddress(baseToken)} of Comet ${comet}`);
  }
  const [principal, , , assetsIn] = user;
  if (principal >= 0n) return refuse('not_liquidatable', `${borrower} has no borrow on Comet ${comet} (never borrowed, repaid, or already absorbed)`);
  if (liquidatable !== true) return refuse('not_liquidatable', `isLiquidatable(${borrower}) is false at block ${ctx.blockNumber}: the position is healthy`);
  if ((totals.pauseFlags & PAUSE_ABSORB) !== 0) return refuse('would_revert', `absorb is paused on Comet ${comet}`);

  const infos = (head.slice(10) as (AssetInfo | undefined)[]).filter((a): a is AssetInfo => a !== undefined && a.asset !== zeroAddress);
  if (!infos.some((a) => getAddress(a.asset) === getAddress(opportunity.collateral_token))) {
    return refuse('unknown_position', `collateral_token ${opportunity.collateral_token} is not a collateral asset of Comet ${comet}`);
  }
  const held = infos.filter((a) => ((assetsIn >> a.offset) & 1) === 1);
  const tail = await readAtTarget(ctx, [
    c('getPrice', [baseFeed]),
    { address: baseToken, abi: erc20Abi, functionName: 'balanceOf', args: [searcher] },
    { address: baseToken, abi: erc20Abi, functionName: 'allowance', args: [searcher, comet] },
    ...held.flatMap((a) => [c('collateralBalanceOf', [borrower, a.asset]), c('getPrice', [a.priceFeed])]),
  ]);
  const [basePrice, searcherBase, allowance] = tail as [bigint | undefined, bigint | undefined, bigint | undefined];
  if (!basePrice || searcherBase === undefined || allowance === undefined) {
    return refuse('unknown_position', `Comet ${comet}: the base price or the searcher's base balance could not be read`);
  }
  const collaterals: CometSeizedCollateral<Address>[] = held
    .map((a, i) => ({
      asset: getAddress(a.asset),
      balance: (tail[3 + 2 * i] as bigint | undefined) ?? 0n,
      price: (tail[4 + 2 * i] as bigint | undefined) ?? 0n,
      scale: a.scale,
      liquidationFactor: a.liquidationFactor,
    }))
    .filter((x) => x.balance > 0n && x.price > 0n);
  if (collaterals.length === 0) return refuse('not_liquidatable', `${borrower} has no collateral left on Comet ${comet} to absorb`);

  const absorbed = cometAbsorb(borrowBalance ?? 0n, basePrice, baseScale, collaterals);
  const buyPaused = (totals.pauseFlags & PAUSE_BUY) !== 0;
  const { buys, baseTotal } = buyPaused
    ? { buys: [], baseTotal: 0n }
    : cometPlanBuys({
        reservesAfterAbsorb: reserves - absorbed.reservesDrop,
        targetReserves,
        storeFrontPriceFactor: storeFront,
        basePrice,
        baseScale,
        collaterals,
      });
  if (searcherBase < baseTotal) {
    return refuse('insufficient_balance', `the collateral costs ${baseTotal} base units of ${getAddress(baseToken)}; ${searcher} holds ${searcherBase}`);
  }

  const calls: PlannedCall[] = [];
  if (baseTotal > 0n && allowance < baseTotal) {
    calls.push({
      to: getAddress(baseToken),
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [comet, baseTotal] }),
      value: 0n,
      purpose: 'approve',
    });
  }
  calls.push({ to: comet, data: encodeFunctionData({ abi: cometAbi, functionName: 'absorb', args: [searcher, [borrower]] }), value: 0n, purpose: 'absorb' });
  for (const b of buys) {
    calls.push({
      to: comet,
      data: encodeFunctionData({ abi: cometAbi, functionName: 'buyCollateral', args: [b.asset, b.collateral, b.baseAmount, searcher] }),
      value: 0n,
      purpose: 'buyCollateral',
    });
  }
  return {
    protocol: 'compound_v3',
    calls,
    repay: { token: getAddress(baseToken), amount: baseTotal },
    expectedSeize: buys.map((b) => ({ token: b.asset, amount: b.collateral })),
  };
};
