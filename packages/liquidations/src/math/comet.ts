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
