/**
 * Morpho Blue math, integer-exact with `Morpho.sol` and its libraries (morpho-org/morpho-blue v1:
 * MathLib, SharesMathLib, ConstantsLib, periphery/MorphoBalancesLib):
 * - interest accrued to the block's timestamp: interest = totalBorrowAssets.wMulDown(rate.wTaylorCompounded(elapsed))
 *   with rate = IIrm.borrowRateView(marketParams, market) (WAD per second);
 * - borrowed = borrowShares.toAssetsUp(totalBorrowAssets, totalBorrowShares) (virtual shares 1e6, virtual assets 1);
 * - maxBorrow = collateral.mulDivDown(oraclePrice, 1e36).wMulDown(lltv); healthy iff maxBorrow >= borrowed;
 *   health factor here = maxBorrow / borrowed (unitless; < 1 exactly when `liquidate` accepts);
 * - liquidation incentive factor LIF = min(1.15, 1 / (1 - 0.3 × (1 - lltv))) (WAD);
 * - any amount may be liquidated (no close factor): up to all the debt, or all the collateral
 *   (then the rest is bad debt, socialized to suppliers).
 */
import { WAD } from './fixed.js';

export const ORACLE_PRICE_SCALE = 10n ** 36n;
export const VIRTUAL_SHARES = 10n ** 6n;
export const VIRTUAL_ASSETS = 1n;
export const MAX_LIQUIDATION_INCENTIVE_FACTOR = 115n * 10n ** 16n;
export const LIQUIDATION_CURSOR = 3n * 10n ** 17n;

export const wMulDown = (x: bigint, y: bigint) => (x * y) / WAD;
export const wDivDown = (x: bigint, y: bigint) => (x * WAD) / y;
export const wDivUp = (x: bigint, y: bigint) => (x * WAD + (y - 1n)) / y;
const mulDivDown = (x: bigint, y: bigint, d: bigint) => (x * y) / d;
const mulDivUp = (x: bigint, y: bigint, d: bigint) => (x * y + (d - 1n)) / d;

export const toAssetsUp = (shares: bigint, totalAssets: bigint, totalShares: bigint) =>
  mulDivUp(shares, totalAssets + VIRTUAL_ASSETS, totalShares + VIRTUAL_SHARES);
export const toAssetsDown = (shares: bigint, totalAssets: bigint, totalShares: bigint) =>
  mulDivDown(shares, totalAssets + VIRTUAL_ASSETS, totalShares + VIRTUAL_SHARES);
export const toSharesUp = (assets: bigint, totalAssets: bigint, totalShares: bigint) =>
  mulDivUp(assets, totalShares + VIRTUAL_SHARES, totalAssets + VIRTUAL_ASSETS);

/** MathLib.wTaylorCompounded: e^(x·n) − 1 to the third order. */
export function wTaylorCompounded(x: bigint, n: bigint): bigint {
  const firstTerm = x * n;
  const secondTerm = mulDivDown(firstTerm, firstTerm, 2n * WAD);
  const thirdTerm = mulDivDown(secondTerm, firstTerm, 3n * WAD);
  return firstTerm + secondTerm + thirdTerm;
}

/** totalBorrowAssets after accruing `elapsed` seconds at `borrowRate` (MorphoBalancesLib.expectedMarketBalances). */
export function accruedTotalBorrowAssets(totalBorrowAssets: bigint, borrowRate: bigint, elapsed: bigint): bigint {
  if (elapsed <= 0n || totalBorrowAssets === 0n || borrowRate === 0n) return totalBorrowAssets;
  return totalBorrowAssets + wMulDown(totalBorrowAssets, wTaylorCompounded(borrowRate, elapsed));
}

/** The liquidation incentive factor of a market (WAD). */
export function liquidationIncentiveFactor(lltv: bigint): bigint {
  const f = wDivDown(WAD, WAD - wMulDown(LIQUIDATION_CURSOR, WAD - lltv));
  return f < MAX_LIQUIDATION_INCENTIVE_FACTOR ? f : MAX_LIQUIDATION_INCENTIVE_FACTOR;
}

/** Market state after accrual. */
export interface MorphoMarketState {
  totalBorrowAssets: bigint;
  totalBorrowShares: bigint;
  price: bigint;
  lltv: bigint;
}

/** Morpho's `_isHealthy` sides for one position. */
export function morphoHealth(borrowShares: bigint, collateral: bigint, m: MorphoMarketState) {
  const borrowed = toAssetsUp(borrowShares, m.totalBorrowAssets, m.totalBorrowShares);
  const maxBorrow = wMulDown(mulDivDown(collateral, m.price, ORACLE_PRICE_SCALE), m.lltv);
  return { borrowed, maxBorrow, liquidatable: borrowShares > 0n && maxBorrow < borrowed };
}

/**
 * The largest `liquidate` of one position: all its debt (by `repaidShares = borrowShares`) when
 * the collateral covers debt × LIF, else all its collateral (by `seizedAssets = collateral`).
 * Returns repaid loan assets, seized collateral and the profit in loan-token units
 * (seized × price / 1e36 − repaid), exactly as `liquidate` computes them.
 */
export function morphoMaxLiquidation(borrowShares: bigint, collateral: bigint, m: MorphoMarketState) {
  const lif = liquidationIncentiveFactor(m.lltv);
  let seizedAssets = wMulDown(toAssetsDown(borrowShares, m.totalBorrowAssets, m.totalBorrowShares), lif);
  seizedAssets = mulDivDown(seizedAssets, ORACLE_PRICE_SCALE, m.price);
  let repaidShares = borrowShares;
  if (seizedAssets > collateral) {
    seizedAssets = collateral;
    const seizedAssetsQuoted = mulDivUp(seizedAssets, m.price, ORACLE_PRICE_SCALE);
    repaidShares = toSharesUp(wDivUp(seizedAssetsQuoted, lif), m.totalBorrowAssets, m.totalBorrowShares);
    if (repaidShares > borrowShares) repaidShares = borrowShares;
  }
  const repaidAssets = toAssetsUp(repaidShares, m.totalBorrowAssets, m.totalBorrowShares);
  const profitLoan = mulDivDown(seizedAssets, m.price, ORACLE_PRICE_SCALE) - repaidAssets;
  return { lif, repaidShares, repaidAssets, seizedAssets, profitLoan };
}

/** Amounts of one `liquidate` call as the contract computes them. */
export interface MorphoLiquidateOutcome {
  /** Collateral sent to the liquidator (collateral token base units). */
  seizedAssets: bigint;
  /** Borrow shares repaid. */
  repaidShares: bigint;
  /** Loan assets pulled from the liquidator: `repaidShares.toAssetsUp` (rounded up, loan token base units). */
  repaidAssets: bigint;
  /** Shares and assets written off as bad debt when the position's collateral reaches 0. */
  badDebtShares: bigint;
  badDebtAssets: bigint;
}

/**
 * `Morpho.liquidate(marketParams, borrower, seizedAssets, repaidShares, data)` on a position, with the
 * market already accrued (`m`): exactly one of `seizedAssets` / `repaidShares` is given, the other is
 * derived as the contract does (`seizedAssets.mulDivUp(price, 1e36).wDivUp(LIF).toSharesUp(...)`, or
 * `repaidShares.toAssetsDown(...).wMulDown(LIF).mulDivDown(1e36, price)`), then
 * `repaidAssets = repaidShares.toAssetsUp(...)`, the position is debited and, when its collateral
 * reaches 0, the remaining shares are bad debt (`min(totalBorrowAssets, shares.toAssetsUp(...))`).
 *
 * @returns The outcome, or `undefined` where the contract reverts: both or neither amount zero
 *   (`INCONSISTENT_INPUT`), more shares than the position has or more collateral than it holds
 *   (checked subtraction), or a zero oracle price on the shares path (division by zero).
 *   The health check (`HEALTHY_POSITION`) is the caller's ({@link morphoHealth}).
 */
export function morphoLiquidate(
  input: { seizedAssets: bigint; repaidShares: bigint },
  position: { borrowShares: bigint; collateral: bigint },
  m: MorphoMarketState,
): MorphoLiquidateOutcome | undefined {
  if ((input.seizedAssets === 0n) === (input.repaidShares === 0n)) return undefined;
  const lif = liquidationIncentiveFactor(m.lltv);
  let { seizedAssets, repaidShares } = input;
  if (seizedAssets > 0n) {
    const seizedAssetsQuoted = mulDivUp(seizedAssets, m.price, ORACLE_PRICE_SCALE);
    repaidShares = toSharesUp(wDivUp(seizedAssetsQuoted, lif), m.totalBorrowAssets, m.totalBorrowShares);
  } else {
    if (m.price === 0n) return undefined;
    seizedAssets = mulDivDown(wMulDown(toAssetsDown(repaidShares, m.totalBorrowAssets, m.totalBorrowShares), lif), ORACLE_PRICE_SCALE, m.price);
  }
  const repaidAssets = toAssetsUp(repaidShares, m.totalBorrowAssets, m.totalBorrowShares);
  if (repaidShares > position.borrowShares || seizedAssets > position.collateral) return undefined;
  const sharesLeft = position.borrowShares - repaidShares;
  const totalBorrowShares = m.totalBorrowShares - repaidShares;
  const totalBorrowAssets = m.totalBorrowAssets > repaidAssets ? m.totalBorrowAssets - repaidAssets : 0n;
  let badDebtShares = 0n;
  let badDebtAssets = 0n;
  if (position.collateral - seizedAssets === 0n) {
    badDebtShares = sharesLeft;
    const up = toAssetsUp(badDebtShares, totalBorrowAssets, totalBorrowShares);
    badDebtAssets = up < totalBorrowAssets ? up : totalBorrowAssets;
  }
  return { seizedAssets, repaidShares, repaidAssets, badDebtShares, badDebtAssets };
}

/**
 * The largest `liquidate` of a liquidatable position that does not revert (there is no close factor):
 * 1. all the debt, `repaidShares = borrowShares`, when the collateral covers what that seizes;
 * 2. else all the collateral, `seizedAssets = collateral` (the shares left become bad debt).
 * When 1 fails, 2 fits: seizing all of `borrowShares` asks for more than `collateral`, so
 * `X = toAssetsDown(borrowShares).wMulDown(LIF) ≥ (collateral + 1) × price / 1e36`, hence
 * `collateral.mulDivUp(price, 1e36) ≤ X`, its `wDivUp(LIF) ≤ toAssetsDown(borrowShares)`, and its
 * `toSharesUp` ≤ `borrowShares`: the rounding never makes both sides overflow (the unit tests fuzz it).
 *
 * @returns The call's two amount arguments (exactly one non-zero) and its {@link MorphoLiquidateOutcome},
 *   or `undefined` when nothing can be liquidated (no shares, no collateral, or a zero price).
 */
export function morphoLargestLiquidation(
  position: { borrowShares: bigint; collateral: bigint },
  m: MorphoMarketState,
): { args: { seizedAssets: bigint; repaidShares: bigint }; outcome: MorphoLiquidateOutcome } | undefined {
  if (position.borrowShares === 0n || position.collateral === 0n || m.price === 0n) return undefined;
  const tryArgs = (args: { seizedAssets: bigint; repaidShares: bigint }) => {
    const outcome = morphoLiquidate(args, position, m);
    return outcome ? { args, outcome } : undefined;
  };
  return tryArgs({ seizedAssets: 0n, repaidShares: position.borrowShares }) ?? tryArgs({ seizedAssets: position.collateral, repaidShares: 0n });
}
