import type { LiquidationPlanOpportunity } from '@acg/schemas';
import { encodeFunctionData, erc20Abi, getAddress, zeroAddress, type Address } from 'viem';
import { aaveAddressesProviderAbi, aaveOracleAbi, aavePoolAbi, aavePoolV33Abi } from '../abis.js';
import { maxLiquidation, type AaveCloseFactorRules } from '../math/aave.js';
import { WAD, ratio, toNumber } from '../math/fixed.js';
import { readAll, type Read } from '../multicall.js';
import type { BlockContext } from '../types.js';
import type { PlanContext, PlanRefusal, PlannedCall, ProtocolPlan, ProtocolPlanner } from './types.js';

/** Options of {@link aavePlannerWith}. */
export interface AavePlannerOptions {
  /**
   * Close-factor rules by lowercase Pool address, overriding the detection (see {@link aavePlanner}).
   */
  closeFactorRules?: Record<string, AaveCloseFactorRules>;
}

const bits = (x: bigint, from: number, len: number) => (x >> BigInt(from)) & ((1n << BigInt(len)) - 1n);
/** ReserveConfiguration (v3): liquidation threshold bits 16-31, bonus 32-47, protocol fee 152-167, eMode category 168-175 (v3.0). */
const cfg = (c: bigint) => ({ lt: bits(c, 16, 16), bonus: bits(c, 32, 16), fee: bits(c, 152, 16), emode: Number(bits(c, 168, 8)) });
const big = (x: unknown) => (typeof x === 'bigint' ? x : 0n);
const refuse = (refused: PlanRefusal['refused'], detail: string): PlanRefusal => ({ refused, detail });

type ReserveData = { id: number; aTokenAddress: Address; stableDebtTokenAddress: Address; variableDebtTokenAddress: Address };
type AccountData = readonly [bigint, bigint, bigint, bigint, bigint, bigint];

/**
 * The Aave v3 / Spark planner with explicit close-factor rules per Pool (tests, and deployments
 * whose revision the detection would misread). See {@link aavePlanner}.
 */
export function aavePlannerWith(options: AavePlannerOptions = {}): ProtocolPlanner {
  return async (ctx: PlanContext, opp: LiquidationPlanOpportunity): Promise<ProtocolPlan | PlanRefusal> => {
    if (opp.protocol !== 'aave_v3' && opp.protocol !== 'spark') return refuse('unknown_position', `${opp.protocol} is not planned by the Aave planner`);
    const pool = getAddress(opp.market);
    const user = getAddress(opp.borrower);
    const collateral = getAddress(opp.collateral_token);
    const debt = getAddress(opp.debt_token);
    const rctx: BlockContext = { client: ctx.client, blockNumber: ctx.blockNumber, timestamp: ctx.timestamp, prices: new Map(), batchSize: 24_576 };

    const [acct, collData, debtData, collConfig, userConfig, userEMode, provider, deficit, collDecimals, debtDecimals, balance, allowance] = await readAll(
      rctx,
      [
        { address: pool, abi: aavePoolAbi, functionName: 'getUserAccountData', args: [user] },
        { address: pool, abi: aavePoolAbi, functionName: 'getReserveData', args: [collateral] },
        { address: pool, abi: aavePoolAbi, functionName: 'getReserveData', args: [debt] },
        { address: pool, abi: aavePoolAbi, functionName: 'getConfiguration', args: [collateral] },
        { address: pool, abi: aavePoolAbi, functionName: 'getUserConfiguration', args: [user] },
        { address: pool, abi: aavePoolAbi, functionName: 'getUserEMode', args: [user] },
        { address: pool, abi: aavePoolAbi, functionName: 'ADDRESSES_PROVIDER' },
        { address: pool, abi: aavePoolV33Abi, functionName: 'getReserveDeficit', args: [debt] },
        { address: collateral, abi: erc20Abi, functionName: 'decimals' },
        { address: debt, abi: erc20Abi, functionName: 'decimals' },
        { address: debt, abi: erc20Abi, functionName: 'balanceOf', args: [ctx.searcher] },
        { address: debt, abi: erc20Abi, functionName: 'allowance', args: [ctx.searcher, pool] },
      ] as Read[],
    );
    if (!acct || !provider) return refuse('unknown_position', `${pool} is not an Aave v3 Pool at block ${ctx.blockNumber}`);
    const cd = collData as ReserveData | undefined;
    const dd = debtData as ReserveData | undefined;
    if (!cd || cd.aTokenAddress === zeroAddress) return refuse('unknown_position', `${collateral} is not a reserve of the Pool ${pool}`);
    if (!dd || dd.variableDebtTokenAddress === zeroAddress) return refuse('unknown_position', `${debt} is not a reserve of the Pool ${pool}`);
    const [, totalDebtBase, , , , hfWad] = acct as AccountData;
    if (totalDebtBase === 0n) return refuse('not_liquidatable', `${user} has no debt on ${pool} (repaid or already liquidated)`);
    if (hfWad >= WAD) return refuse('not_liquidatable', `health_factor ${ratio(hfWad, WAD).toFixed(4)} is not below 1`);
    const uc = (userConfig as { data: bigint } | undefined)?.data ?? 0n;
    if (bits(uc, cd.id * 2 + 1, 1) !== 1n) return refuse('not_liquidatable', `${user} does not use ${collateral} as collateral`);
    if (bits(uc, dd.id * 2, 1) !== 1n) return refuse('not_liquidatable', `${user} has no debt in ${debt}`);

    const rules: AaveCloseFactorRules = options.closeFactorRules?.[pool.toLowerCase()] ?? (deficit === undefined ? 'v3.0' : 'v3.3');
    const emode = Number(big(userEMode));
    const cc = cfg((collConfig as { data: bigint } | undefined)?.data ?? 0n);
    const reads: Read[] = [
      { address: provider as Address, abi: aaveAddressesProviderAbi, functionName: 'getPriceOracle' },
      { address: cd.aTokenAddress, abi: erc20Abi, functionName: 'balanceOf', args: [user] },
      { address: dd.variableDebtTokenAddress, abi: erc20Abi, functionName: 'balanceOf', args: [user] },
    ];
    if (dd.stableDebtTokenAddress !== zeroAddress) reads.push({ address: dd.stableDebtTokenAddress, abi: erc20Abi, functionName: 'balanceOf', args: [user] });
    const emodeAt = reads.length;
    if (emode !== 0) {
      if (rules === 'v3.0') reads.push({ address: pool, abi: aavePoolAbi, functionName: 'getEModeCategoryData', args: [emode] });
      else {
        reads.push({ address: pool, abi: aavePoolAbi, functionName: 'getEModeCategoryCollateralConfig', args: [emode] });
        reads.push({ address: pool, abi: aavePoolAbi, functionName: 'getEModeCategoryCollateralBitmap', args: [emode] });
      }
    }
    const r2 = await readAll(rctx, reads);
    const oracle = r2[0] as Address | undefined;
    const collateralBalance = big(r2[1]);
    const reserveDebt = big(r2[2]) + (dd.stableDebtTokenAddress !== zeroAddress ? big(r2[3]) : 0n);
    if (!oracle) return refuse('unknown_position', `the Pool ${pool} has no price oracle`);
    let bonus = cc.bonus;
    if (emode !== 0) {
      const emodeBonus = BigInt((r2[emodeAt] as { liquidationBonus: number } | undefined)?.liquidationBonus ?? 0);
      const inCategory = rules === 'v3.0' ? cc.emode === emode : ((big(r2[emodeAt + 1]) >> BigInt(cd.id)) & 1n) === 1n;
      if (inCategory && emodeBonus > 0n) bonus = emodeBonus;
    }
    const [prices, baseUnitRead] = await readAll(rctx, [
      { address: oracle, abi: aaveOracleAbi, functionName: 'getAssetsPrices', args: [[collateral, debt]] },
      { address: oracle, abi: aaveOracleAbi, functionName: 'BASE_CURRENCY_UNIT' },
    ]);
    const [collateralPrice, debtPrice] = (prices as bigint[] | undefined) ?? [0n, 0n];
    if (!collateralPrice || !debtPrice) return refuse('unknown_position', `the Aave oracle ${oracle} has no price for the pair`);
    const baseUnit = big(baseUnitRead) || 10n ** 8n;
    const collateralUnit = 10n ** BigInt(Number(collDecimals ?? 18));
    const debtUnit = 10n ** BigInt(Number(debtDecimals ?? 18));

    const out = maxLiquidation(
      {
        healthFactor: hfWad,
        totalDebtBase,
        reserveDebt,
        debtPrice,
        debtUnit,
        collateralBalance,
        collateralPrice,
        collateralUnit,
        liquidationBonus: bonus,
        protocolFee: cc.fee,
      },
      rules,
    );
    if (!out || out.debtToCover === 0n)
      return refuse('not_liquidatable', `no ${rules} liquidation of this pair repays anything without reverting (close factor or MUST_NOT_LEAVE_DUST)`);
    const debtToCover = out.debtToCover;
    const held = big(balance);
    if (held < debtToCover)
      return refuse('insufficient_balance', `the searcher ${ctx.searcher} holds ${held} base units of ${debt}; the liquidation repays ${debtToCover}`);

    const calls: PlannedCall[] = [];
    if (big(allowance) < debtToCover)
      calls.push({ to: debt, data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [pool, debtToCover] }), value: 0n, purpose: 'approve' });
    calls.push({
      to: pool,
      data: encodeFunctionData({ abi: aavePoolAbi, functionName: 'liquidationCall', args: [collateral, debt, user, debtToCover, false] }),
      value: 0n,
      purpose: 'liquidationCall',
    });
    const usd = (price: bigint) => toNumber(price) / toNumber(baseUnit);
    return {
      protocol: opp.protocol,
      calls,
      repay: { token: debt, amount: debtToCover },
      expectedSeize: [{ token: collateral, amount: out.collateralToLiquidator }],
      usdPrices: { [collateral.toLowerCase()]: usd(collateralPrice), [debt.toLowerCase()]: usd(debtPrice) },
    };
  };
}

/**
 * Plans an Aave v3 or Spark liquidation (docs/liquidation-plans.md "Aave v3 and Spark"):
 * `liquidationCall(collateral, debt, user, debtToCover, receiveAToken = false)` on the Pool with
 * the largest `debtToCover` the Pool's code allows at `ctx.blockNumber` (math/aave.ts
 * `maxLiquidation`: v3.0 close factor 50% / 100% below HF 0.95; v3.3 close factor on the total debt
 * and the $1,000 dust rule), preceded by `approve(Pool, debtToCover)` on the debt token when the
 * searcher's allowance is short. The rules are read from the Pool: one answering
 * `getReserveDeficit` (added in Aave v3.3) runs v3.3's, else v3.0's (SparkLend and aave-v3-core
 * 3.0.x, the dev chain's Aave). eMode: the category's bonus when the collateral is in the user's
 * category. Amounts are fixed base units, so the repaid debt and the seized collateral do not
 * depend on the target block's timestamp (interest only raises the Pool's cap).
 *
 * Refusals: `unknown_position` (not a Pool or not a reserve), `not_liquidatable` (no debt, health
 * factor ≥ 1, the pair not used, or only dust left), `insufficient_balance` (the searcher holds
 * less of the debt token than `debtToCover`).
 */
export const aavePlanner: ProtocolPlanner = aavePlannerWith();
