/**
 * Compound III (Comet) liquidation math, integer-exact with `Comet.sol` / `CometCore.sol`
 * (compound-finance/comet):
 * - `isLiquidatable(account)`: liquidity = -presentValueBorrow(baseBorrowIndex, -principal) × basePrice / baseScale
 *   + Σ over assetsIn of mulFactor(balance × price / scale, liquidateCollateralFactor); liquidatable iff < 0.
 *   It uses the STORED `baseBorrowIndex` (last accrual), not the accrued one `borrowBalanceOf` uses.
 *   Health factor here = Σ collateral terms / debt term (unitless; < 1 exactly when isLiquidatable).
 * - `absorb`: the protocol takes the WHOLE position (no close factor): all collateral is seized into
 *   reserves and the debt is written off against them; the absorber gets no collateral.
 * - `buyCollateral` / `quoteCollateral`: anyone buys seized collateral for base at the store-front
 *   price `assetPrice × (1 - storeFrontPriceFactor × (1 - liquidationFactor))`, only while
 *   reserves < `targetReserves` (else `NotForSale`). A liquidator's profit is that discount.
 * Units: prices are Comet's (USD × 1e8); factors are 1e18-scaled; amounts are base units.
 */
import { WAD } from './fixed.js';

export const BASE_INDEX_SCALE = 10n ** 15n;
export const FACTOR_SCALE = WAD;

export const mulFactor = (n: bigint, factor: bigint): bigint => (n * factor) / FACTOR_SCALE;
export const mulPrice = (n: bigint, price: bigint, fromScale: bigint): bigint => (n * price) / fromScale;
export const presentValueBorrow = (baseBorrowIndex: bigint, principal: bigint): bigint => (principal * baseBorrowIndex) / BASE_INDEX_SCALE;

/** One collateral of an account with its asset parameters. */
export interface CometCollateral {
  balance: bigint;
  price: bigint;
  scale: bigint;
  liquidateCollateralFactor: bigint;
  liquidationFactor: bigint;
}

/** The two sides of Comet's `isLiquidatable` (USD × 1e8). */
export function cometLiquidity(principal: bigint, baseBorrowIndex: bigint, basePrice: bigint, baseScale: bigint, collaterals: CometCollateral[]) {
  if (principal >= 0n) return { debtValue: 0n, collateralValue: 0n, liquidatable: false };
  const debtValue = mulPrice(presentValueBorrow(baseBorrowIndex, -principal), basePrice, baseScale);
  let collateralValue = 0n;
  for (const c of collaterals) collateralValue += mulFactor(mulPrice(c.balance, c.price, c.scale), c.liquidateCollateralFactor);
  return { debtValue, collateralValue, liquidatable: collateralValue < debtValue };
}

/**
 * Base needed to buy `collateral` units of one asset from the protocol (inverse of `quoteCollateral`,
 * rounded up), and the store-front discount factor (1e18 scale).
 */
export function cometBuyCost(
  collateral: bigint,
  c: Pick<CometCollateral, 'price' | 'scale' | 'liquidationFactor'>,
  storeFrontPriceFactor: bigint,
  basePrice: bigint,
  baseScale: bigint,
) {
  const discountFactor = mulFactor(storeFrontPriceFactor, FACTOR_SCALE - c.liquidationFactor);
  const assetPriceDiscounted = mulFactor(c.price, FACTOR_SCALE - discountFactor);
  // quoteCollateral: basePrice * baseAmount * scale / assetPriceDiscounted / baseScale
  const num = collateral * assetPriceDiscounted * baseScale;
  const den = basePrice * c.scale;
  const baseAmount = (num + den - 1n) / den;
  return { baseAmount, discountFactor };
}

/** One collateral asset of an account as `absorb` and `buyCollateral` see it (prices USD × 1e8, factors 1e18). */
export interface CometSeizedCollateral<A extends string = string> {
  asset: A;
  balance: bigint;
  price: bigint;
  scale: bigint;
  liquidationFactor: bigint;
}

/** Comet's store-front price of one asset: `assetPrice × (1 − storeFrontPriceFactor × (1 − liquidationFactor))` (USD × 1e8). */
export function cometDiscountedPrice(c: Pick<CometSeizedCollateral, 'price' | 'liquidationFactor'>, storeFrontPriceFactor: bigint): bigint {
  const discountFactor = mulFactor(storeFrontPriceFactor, FACTOR_SCALE - c.liquidationFactor);
  return mulFactor(c.price, FACTOR_SCALE - discountFactor);
}

/**
 * `Comet.quoteCollateral(asset, baseAmount)`: collateral units `baseAmount` of base buys,
 * `basePrice × baseAmount × scale / assetPriceDiscounted / baseScale` (each division rounds down).
 */
export function cometQuoteCollateral(
  baseAmount: bigint,
  c: Pick<CometSeizedCollateral, 'price' | 'scale' | 'liquidationFactor'>,
  storeFrontPriceFactor: bigint,
  basePrice: bigint,
  baseScale: bigint,
): bigint {
  return (basePrice * baseAmount * c.scale) / cometDiscountedPrice(c, storeFrontPriceFactor) / baseScale;
}

/**
 * How to buy all of `collateral` (a seized balance) with `buyCollateral`: the most collateral the
 * store front sells without going over `collateral`, for the least base that buys it.
 * `quoteCollateral` rounds down, and floor(floor(x / a) / b) = floor(x / (a·b)), so a quote is
 * ≤ `collateral` exactly when `basePrice × baseAmount × scale < (collateral + 1) × assetPriceDiscounted × baseScale`;
 * the largest such base amount fixes the collateral bought, and the smallest base amount with that
 * quote (rounded up, {@link cometBuyCost}) is what to pay. When one base unit buys many collateral
 * units, all but that dust is bought; buying with the rounded-up inverse of the whole balance
 * instead could ask for more than the protocol holds (`InsufficientReserves`).
 *
 * @returns `baseAmount` to pay and `collateral` (= `quoteCollateral(asset, baseAmount)`) received;
 *   both 0 when not one collateral unit can be bought, or the store-front price is 0.
 */
export function cometBuyAll(
  collateral: bigint,
  c: Pick<CometSeizedCollateral, 'price' | 'scale' | 'liquidationFactor'>,
  storeFrontPriceFactor: bigint,
  basePrice: bigint,
  baseScale: bigint,
): { baseAmount: bigint; collateral: bigint } {
  const discounted = cometDiscountedPrice(c, storeFrontPriceFactor);
  if (discounted === 0n || basePrice === 0n) return { baseAmount: 0n, collateral: 0n };
  const maxBase = ((collateral + 1n) * discounted * baseScale - 1n) / (basePrice * c.scale);
  const bought = cometQuoteCollateral(maxBase, c, storeFrontPriceFactor, basePrice, baseScale);
  if (bought === 0n) return { baseAmount: 0n, collateral: 0n };
  return { baseAmount: cometBuyCost(bought, c, storeFrontPriceFactor, basePrice, baseScale).baseAmount, collateral: bought };
}

/**
 * What `absorb` (`absorbInternal`) does to one account and to the reserves, with the borrow balance
 * accrued to the absorbing block: the collateral is valued at `liquidationFactor`
 * (`deltaValue = Σ mulFactor(mulPrice(balance, price, scale), liquidationFactor)`, converted to base
 * with `divPrice`), the debt is written off against reserves, and what exceeds the debt is credited
 * to the account as a supply. Reserves (`balance − totalSupply + totalBorrow`) fall by the debt
 * written off plus that credit (to within Comet's principal rounding, ±2 base units).
 */
export function cometAbsorb(borrowBalance: bigint, basePrice: bigint, baseScale: bigint, collaterals: readonly CometSeizedCollateral[]) {
  let deltaValue = 0n;
  for (const c of collaterals) deltaValue += mulFactor(mulPrice(c.balance, c.price, c.scale), c.liquidationFactor);
  const deltaBalance = basePrice === 0n ? 0n : (deltaValue * baseScale) / basePrice;
  const surplus = deltaBalance > borrowBalance ? deltaBalance - borrowBalance : 0n;
  return { deltaBalance, surplus, reservesDrop: borrowBalance + surplus };
}

/** One `buyCollateral(asset, minAmount = collateral, baseAmount, recipient)` of a plan. */
export interface CometBuy<A extends string = string> {
  asset: A;
  baseAmount: bigint;
  /** `quoteCollateral(asset, baseAmount)`: what the buyer receives (base units of the asset). */
  collateral: bigint;
}

/**
 * The `buyCollateral` calls that follow an `absorb`: each seized asset is bought whole (with
 * {@link cometBuyAll}), the most valuable discount first, while the reserves the contract checks
 * before each buy (`reserves >= 0 && reserves >= targetReserves` → `NotForSale`) are below
 * `targetReserves`. A buy adds its `baseAmount` to the reserves, so a later asset may no longer be for
 * sale. `reservesAfterAbsorb` may be negative. Assets with nothing to buy are skipped.
 *
 * @returns The buys in call order, the base they cost, and the assets left unsold because the
 *   reserves reached the target (`notForSale`).
 */
export function cometPlanBuys<A extends string>(input: {
  reservesAfterAbsorb: bigint;
  targetReserves: bigint;
  storeFrontPriceFactor: bigint;
  basePrice: bigint;
  baseScale: bigint;
  collaterals: readonly CometSeizedCollateral<A>[];
}): { buys: CometBuy<A>[]; baseTotal: bigint; reservesAfter: bigint; notForSale: A[] } {
  const { targetReserves, storeFrontPriceFactor: sf, basePrice, baseScale } = input;
  const ranked = input.collaterals
    .map((c, i) => {
      const value = mulPrice(c.balance, c.price, c.scale);
      return { c, i, gain: value - mulPrice(c.balance, cometDiscountedPrice(c, sf), c.scale) };
    })
    .sort((a, b) => (a.gain === b.gain ? a.i - b.i : a.gain > b.gain ? -1 : 1));
  let reserves = input.reservesAfterAbsorb;
  const buys: CometBuy<A>[] = [];
  const notForSale: A[] = [];
  let baseTotal = 0n;
  for (const { c } of ranked) {
    const { baseAmount, collateral } = cometBuyAll(c.balance, c, sf, basePrice, baseScale);
    if (collateral === 0n) continue;
    if (reserves >= 0n && reserves >= targetReserves) {
      notForSale.push(c.asset);
      continue;
    }
    buys.push({ asset: c.asset, baseAmount, collateral });
    baseTotal += baseAmount;
    reserves += baseAmount;
  }
  return { buys, baseTotal, reservesAfter: reserves, notForSale };
}
