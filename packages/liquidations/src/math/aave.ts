/**
 * Aave v3 liquidation math, integer-exact with the contracts.
 *
 * Sources (Aave v3 `LiquidationLogic.sol`, `PercentageMath.sol`):
 * - v3.0.x (aave-v3-core 1.19.x, the npm `@aave/core-v3` artifacts; SparkLend runs this rule):
 *   `_calculateDebt`: close factor 50% (`DEFAULT_LIQUIDATION_CLOSE_FACTOR = 0.5e4`) when
 *   health factor > `CLOSE_FACTOR_HF_THRESHOLD = 0.95e18`, else 100% (`MAX_LIQUIDATION_CLOSE_FACTOR`),
 *   applied to the user's debt in the chosen debt reserve (stable + variable).
 * - v3.3+ (aave-v3-origin): 100% of the reserve debt by default; 50% of the user's TOTAL debt (in
 *   base currency) only when the chosen collateral and debt reserves are each worth at least
 *   `MIN_BASE_MAX_CLOSE_FACTOR_THRESHOLD = 2000e8` ($2,000) and health factor > 0.95; and no
 *   liquidation may leave dust: unless all the reserve debt or all the collateral is taken, both
 *   leftovers must be worth at least `MIN_LEFTOVER_BASE = 1000e8` ($1,000), else `MUST_NOT_LEAVE_DUST`.
 * - Both: `_calculateAvailableCollateralToLiquidate` (collateral = debt value × liquidation bonus,
 *   capped by the user's aToken balance; the protocol fee is a share of the bonus part).
 *
 * Units: amounts are token base units; prices are the Aave oracle's base currency units
 * (USD × 1e8 on Ethereum); percentages are basis points (10000 = 100%); health factor is WAD.
 */
import { WAD } from './fixed.js';

export const PERCENTAGE_FACTOR = 10_000n;
export const CLOSE_FACTOR_HF_THRESHOLD = 95n * 10n ** 16n; // 0.95e18
export const DEFAULT_LIQUIDATION_CLOSE_FACTOR = 5_000n;
export const MAX_LIQUIDATION_CLOSE_FACTOR = 10_000n;
/** v3.3: $2,000 in base currency (1e8). */
export const MIN_BASE_MAX_CLOSE_FACTOR_THRESHOLD = 2_000n * 10n ** 8n;
/** v3.3: $1,000 in base currency (1e8). */
export const MIN_LEFTOVER_BASE = MIN_BASE_MAX_CLOSE_FACTOR_THRESHOLD / 2n;

/** Which close-factor rules a deployment runs. */
export type AaveCloseFactorRules = 'v3.0' | 'v3.3';

/** PercentageMath.percentMul: half-up rounding. */
export const percentMul = (value: bigint, pct: bigint): bigint => (value * pct + PERCENTAGE_FACTOR / 2n) / PERCENTAGE_FACTOR;
/** PercentageMath.percentDiv: half-up rounding. */
export const percentDiv = (value: bigint, pct: bigint): bigint => (value * PERCENTAGE_FACTOR + pct / 2n) / pct;

/** What one liquidationCall on a (collateral, debt) pair does. */
export interface AaveLiquidationInputs {
  /** Health factor from getUserAccountData, WAD. */
  healthFactor: bigint;
  /** User's total debt in base currency (getUserAccountData.totalDebtBase), for v3.3's 50% cap. */
  totalDebtBase: bigint;
  /** User's debt in the debt reserve (stable + variable), debt token base units. */
  reserveDebt: bigint;
  debtPrice: bigint;
  debtUnit: bigint;
  /** User's aToken balance of the collateral reserve, collateral base units. */
  collateralBalance: bigint;
  collateralPrice: bigint;
  collateralUnit: bigint;
  /** Liquidation bonus, bps (e.g. 10500 = 5% bonus). */
  liquidationBonus: bigint;
  /** Liquidation protocol fee, bps of the bonus part. */
  protocolFee: bigint;
}

/** Outcome of a liquidation: debt repaid, collateral to the liquidator, fee to the protocol (base units). */
export interface AaveLiquidationOutcome {
  debtToCover: bigint;
  collateralToLiquidator: bigint;
  protocolFee: bigint;
  /** Liquidator's gain in base currency: collateral received minus debt repaid, at oracle prices. */
  profitBase: bigint;
}

/**
 * `_calculateAvailableCollateralToLiquidate` for `debtToCover` (already capped by the close factor).
 * Returns the collateral the liquidator receives, the debt actually repaid and the protocol fee.
 */
export function availableCollateralToLiquidate(i: AaveLiquidationInputs, debtToCover: bigint): AaveLiquidationOutcome {
  const baseCollateral = (i.debtPrice * debtToCover * i.collateralUnit) / (i.collateralPrice * i.debtUnit);
  const maxCollateralToLiquidate = percentMul(baseCollateral, i.liquidationBonus);
  let collateralAmount: bigint;
  let debtAmountNeeded: bigint;
  if (maxCollateralToLiquidate > i.collateralBalance) {
    collateralAmount = i.collateralBalance;
    debtAmountNeeded = percentDiv((i.collateralPrice * collateralAmount * i.debtUnit) / (i.debtPrice * i.collateralUnit), i.liquidationBonus);
  } else {
    collateralAmount = maxCollateralToLiquidate;
    debtAmountNeeded = debtToCover;
  }
  let protocolFee = 0n;
  if (i.protocolFee !== 0n) {
    const bonusCollateral = collateralAmount - percentDiv(collateralAmount, i.liquidationBonus);
    protocolFee = percentMul(bonusCollateral, i.protocolFee);
  }
  const collateralToLiquidator = collateralAmount - protocolFee;
  const profitBase = (collateralToLiquidator * i.collateralPrice) / i.collateralUnit - (debtAmountNeeded * i.debtPrice) / i.debtUnit;
  return { debtToCover: debtAmountNeeded, collateralToLiquidator, protocolFee, profitBase };
}

/**
 * The largest debt one `liquidationCall` on this pair can repay without reverting, and its outcome,
 * under `rules` (see the module doc). Returns null when the position is not liquidatable
 * (health factor >= 1) or nothing can be repaid without leaving dust (v3.3).
 */
export function maxLiquidation(i: AaveLiquidationInputs, rules: AaveCloseFactorRules): AaveLiquidationOutcome | null {
  if (i.healthFactor >= WAD || i.reserveDebt === 0n || i.collateralBalance === 0n) return null;
  if (rules === 'v3.0') {
    const closeFactor = i.healthFactor > CLOSE_FACTOR_HF_THRESHOLD ? DEFAULT_LIQUIDATION_CLOSE_FACTOR : MAX_LIQUIDATION_CLOSE_FACTOR;
    return availableCollateralToLiquidate(i, percentMul(i.reserveDebt, closeFactor));
  }
  // v3.3+
  const reserveDebtBase = (i.reserveDebt * i.debtPrice) / i.debtUnit;
  const collateralBase = (i.collateralBalance * i.collateralPrice) / i.collateralUnit;
  let maxLiquidatableDebt = i.reserveDebt;
  if (
    collateralBase >= MIN_BASE_MAX_CLOSE_FACTOR_THRESHOLD &&
    reserveDebtBase >= MIN_BASE_MAX_CLOSE_FACTOR_THRESHOLD &&
    i.healthFactor > CLOSE_FACTOR_HF_THRESHOLD
  ) {
    const half = percentMul(i.totalDebtBase, DEFAULT_LIQUIDATION_CLOSE_FACTOR);
    if (reserveDebtBase > half) maxLiquidatableDebt = (half * i.debtUnit) / i.debtPrice;
  }
  const leavesDust = (o: AaveLiquidationOutcome) => {
    if (o.debtToCover >= i.reserveDebt) return false;
    if (o.collateralToLiquidator + o.protocolFee >= i.collateralBalance) return false;
    const debtLeft = ((i.reserveDebt - o.debtToCover) * i.debtPrice) / i.debtUnit;
    const collLeft = ((i.collateralBalance - o.collateralToLiquidator - o.protocolFee) * i.collateralPrice) / i.collateralUnit;
    return debtLeft < MIN_LEFTOVER_BASE || collLeft < MIN_LEFTOVER_BASE;
  };
  let best = availableCollateralToLiquidate(i, maxLiquidatableDebt);
  if (!leavesDust(best)) return best;
  // Repay less so that both leftovers stay >= MIN_LEFTOVER_BASE (the liquidator's best legal amount).
  const debtKeep = (MIN_LEFTOVER_BASE * i.debtUnit + i.debtPrice - 1n) / i.debtPrice + 1n;
  const collKeep = (MIN_LEFTOVER_BASE * i.collateralUnit + i.collateralPrice - 1n) / i.collateralPrice + 1n;
  const collUsable = i.collateralBalance > collKeep ? i.collateralBalance - collKeep : 0n;
  // Debt whose bonus-inflated collateral (fee included) fits in collUsable, with 0.1% slack for rounding.
  const byCollateral = (percentDiv((collUsable * i.collateralPrice * i.debtUnit) / (i.debtPrice * i.collateralUnit), i.liquidationBonus) * 999n) / 1000n;
  let candidate = maxLiquidatableDebt;
  if (i.reserveDebt > debtKeep) candidate = candidate < i.reserveDebt - debtKeep ? candidate : i.reserveDebt - debtKeep;
  else candidate = 0n;
  if (byCollateral < candidate) candidate = byCollateral;
  if (candidate <= 0n) return null;
  best = availableCollateralToLiquidate(i, candidate);
  return leavesDust(best) ? null : best;
}
