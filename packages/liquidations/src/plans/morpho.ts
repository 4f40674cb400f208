import { encodeFunctionData, erc20Abi, getAddress, zeroAddress, type Address, type Hex } from 'viem';
import { morphoAbi, morphoIrmAbi, morphoOracleAbi } from '../abis.js';
import { accruedTotalBorrowAssets, morphoHealth, morphoLargestLiquidation, toAssetsUp, type MorphoMarketState } from '../math/morpho.js';
import type { Read } from '../multicall.js';
import { readAtTarget } from './atTarget.js';
import type { PlannedCall, PlanRefusal, ProtocolPlanner } from './types.js';

/**
 * Seconds of extra interest the loan-token approval covers beyond the target block's timestamp, so
 * that a block landing a little later than assumed (more interest on the shares repaid) still finds
 * enough allowance. The searcher's balance is checked against the amount at the target timestamp.
 */
export const MORPHO_APPROVAL_SLACK_SECONDS = 120n;

type MarketParams = { loanToken: Address; collateralToken: Address; oracle: Address; irm: Address; lltv: bigint };

const refuse = (refused: PlanRefusal['refused'], detail: string): PlanRefusal => ({ refused, detail });

/**
 * Morpho Blue planner (docs/liquidation-plans.md "Morpho Blue"; the math and its sources in
 * `math/morpho.ts`). Reads the market and the position at the target block (state of
 * `ctx.blockNumber`, timestamp `ctx.timestamp`, {@link readAtTarget}), accrues interest to
 * `ctx.timestamp` as `_accrueInterest` will (`borrowRateView` at that timestamp, `wTaylorCompounded`),
 * and plans the largest liquidation `liquidate` accepts (there is no close factor,
 * {@link morphoLargestLiquidation}): all the debt (`repaidShares = borrowShares`), or all the
 * collateral (`seizedAssets = collateral`, the rest becoming bad debt) when it is short. Calls:
 * 1. `approve(morpho, amount)` on the loan token, when the searcher's allowance is below the
 *    assets repaid; the amount covers {@link MORPHO_APPROVAL_SLACK_SECONDS} more of interest;
 * 2. `liquidate(marketParams, borrower, seizedAssets, repaidShares, data = 0x)`.
 *
 * `repay` = loan token, `repaidShares.toAssetsUp(...)` (rounded up as Morpho does);
 * `expectedSeize` = collateral token, the seized assets.
 *
 * Refusals: `unknown_position` (no `market_id`, no such market on `market`, or tokens that are not
 * the market's), `not_liquidatable` (no borrow shares, e.g. already liquidated; healthy at the
 * target timestamp; no collateral), `would_revert` (oracle price 0, or no amount the contract
 * accepts), `insufficient_balance` (the searcher holds less loan token than the repaid assets).
 */
export const morphoPlanner: ProtocolPlanner = async (ctx, opportunity) => {
  if (opportunity.protocol !== 'morpho_blue') return refuse('unknown_position', `the Morpho planner plans morpho_blue, not ${opportunity.protocol}`);
  if (!opportunity.market_id) return refuse('unknown_position', 'market_id (the Morpho Blue market id) is required for morpho_blue');
  const morpho = getAddress(opportunity.market);
  const id = opportunity.market_id as Hex;
  const borrower = getAddress(opportunity.borrower);
  const searcher = getAddress(ctx.searcher);
  const m = (functionName: string, args: readonly unknown[]): Read => ({ address: morpho, abi: morphoAbi, functionName, args });

  const [rawParams, rawMarket, rawPosition] = (await readAtTarget(ctx, [m('idToMarketParams', [id]), m('market', [id]), m('position', [id, borrower])])) as [
    readonly [Address, Address, Address, Address, bigint] | undefined,
    readonly [bigint, bigint, bigint, bigint, bigint, bigint] | undefined,
    readonly [bigint, bigint, bigint] | undefined,
  ];
  if (!rawParams || !rawMarket || !rawPosition || rawParams[0] === zeroAddress || rawMarket[4] === 0n) {
    return refuse('unknown_position', `no market ${id} on Morpho Blue ${morpho} at block ${ctx.blockNumber}`);
  }
  const params: MarketParams = {
    loanToken: getAddress(rawParams[0]),
    collateralToken: getAddress(rawParams[1]),
    oracle: getAddress(rawParams[2]),
    irm: getAddress(rawParams[3]),
    lltv: rawParams[4],
  };
  if (getAddress(opportunity.debt_token) !== params.loanToken || getAddress(opportunity.collateral_token) !== params.collateralToken) {
    return refuse(
      'unknown_position',
      `market ${id} lends ${params.loanToken} against ${params.collateralToken}, not ${opportunity.debt_token} against ${opportunity.collateral_token}`,
    );
  }
  const [, borrowShares, collateral] = rawPosition;
  if (borrowShares === 0n)
    return refuse('not_liquidatable', `${borrower} has no borrow shares in market ${id} (never borrowed, repaid, or already liquidated)`);

  const [totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate, fee] = rawMarket;
  const market = { totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate, fee };
  const noIrm = params.irm === zeroAddress; // no interest (Morpho skips the accrual)
  const [price, searcherLoan, allowance, irmRate] = (await readAtTarget(ctx, [
    { address: params.oracle, abi: morphoOracleAbi, functionName: 'price' },
    { address: params.loanToken, abi: erc20Abi, functionName: 'balanceOf', args: [searcher] },
    { address: params.loanToken, abi: erc20Abi, functionName: 'allowance', args: [searcher, morpho] },
    ...(noIrm ? [] : [{ address: params.irm, abi: morphoIrmAbi, functionName: 'borrowRateView', args: [params, market] } as Read]),
  ])) as (bigint | undefined)[];
  const rate = noIrm ? 0n : irmRate;
  if (price === undefined || rate === undefined || searcherLoan === undefined || allowance === undefined) {
    return refuse(
      'would_revert',
      `market ${id}: the oracle price, the IRM's borrow rate or the searcher's loan-token balance could not be read at the target block`,
    );
  }
  if (price === 0n) return refuse('would_revert', `market ${id}: the oracle price is 0`);

  const elapsed = ctx.timestamp > lastUpdate ? ctx.timestamp - lastUpdate : 0n;
  const state: MorphoMarketState = {
    totalBorrowAssets: accruedTotalBorrowAssets(totalBorrowAssets, rate, elapsed),
    totalBorrowShares,
    price,
    lltv: params.lltv,
  };
  const health = morphoHealth(borrowShares, collateral, state);
  if (!health.liquidatable) {
    return refuse(
      'not_liquidatable',
      `${borrower} is healthy in market ${id} at the target timestamp: max borrow ${health.maxBorrow} ≥ borrowed ${health.borrowed}`,
    );
  }
  if (collateral === 0n) return refuse('not_liquidatable', `${borrower} has no collateral left in market ${id} to seize`);
  const best = morphoLargestLiquidation({ borrowShares, collateral }, state);
  if (!best) return refuse('would_revert', `market ${id}: no seized amount or repaid shares that liquidate accepts for ${borrower}`);
  const { args, outcome } = best;
  if (searcherLoan < outcome.repaidAssets) {
    return refuse(
      'insufficient_balance',
      `the liquidation repays ${outcome.repaidAssets} base units of ${params.loanToken}; ${searcher} holds ${searcherLoan}`,
    );
  }

  const calls: PlannedCall[] = [];
  if (allowance < outcome.repaidAssets) {
    const later = accruedTotalBorrowAssets(totalBorrowAssets, rate, elapsed + MORPHO_APPROVAL_SLACK_SECONDS);
    // ≥ repaidAssets: the same shares are worth at least as many assets later
    const approveAmount = toAssetsUp(outcome.repaidShares, later, totalBorrowShares);
    calls.push({
      to: params.loanToken,
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: 'approve',
        args: [morpho, approveAmount],
      }),
      value: 0n,
      purpose: 'approve',
    });
  }
  calls.push({
    to: morpho,
    data: encodeFunctionData({ abi: morphoAbi, functionName: 'liquidate', args: [params, borrower, args.seizedAssets, args.repaidShares, '0x'] }),
    value: 0n,
    purpose: 'liquidate',
  });
  return {
    protocol: 'morpho_blue',
    calls,
    repay: { token: params.loanToken, amount: outcome.repaidAssets },
    expectedSeize: [{ token: params.collateralToken, amount: outcome.seizedAssets }],
  };
};
