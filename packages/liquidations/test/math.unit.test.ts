import { describe, expect, it } from 'vitest';
import { availableCollateralToLiquidate, maxLiquidation, MIN_LEFTOVER_BASE, percentDiv, percentMul, type AaveLiquidationInputs } from '../src/math/aave.js';
import { cometBuyCost, cometLiquidity } from '../src/math/comet.js';
import { ratio } from '../src/math/fixed.js';
import { liquidationIncentiveFactor, morphoHealth, morphoMaxLiquidation, wTaylorCompounded } from '../src/math/morpho.js';

const WAD = 10n ** 18n;
const E8 = 10n ** 8n;

/** A WETH-collateral / USDC-debt Aave position, prices in USD × 1e8. */
function aave(o: Partial<AaveLiquidationInputs> = {}): AaveLiquidationInputs {
  return {
    healthFactor: 97n * 10n ** 16n,
    totalDebtBase: 40_000n * E8,
    reserveDebt: 40_000n * 10n ** 6n,
    debtPrice: E8,
    debtUnit: 10n ** 6n,
    collateralBalance: 25n * WAD,
    collateralPrice: 2_000n * E8,
    collateralUnit: WAD,
    liquidationBonus: 10_500n,
    protocolFee: 0n,
    ...o,
  };
}

describe('Aave PercentageMath', () => {
  it('rounds half up like the contract', () => {
    expect(percentMul(10_001n, 5_000n)).toBe(5_001n); // 5000.5 → 5001
    expect(percentMul(3n, 5_000n)).toBe(2n); // 1.5 → 2
    expect(percentDiv(100n, 10_500n)).toBe(95n); // 95.238 → 95
  });
});

describe('Aave v3.0 close factor (SparkLend, aave-v3-core 3.0.x)', () => {
  it('covers 50% of the reserve debt above HF 0.95 and 100% at or below it', () => {
    const half = maxLiquidation(aave({ healthFactor: 951n * 10n ** 15n }), 'v3.0')!;
    expect(half.debtToCover).toBe(20_000n * 10n ** 6n);
    const full = maxLiquidation(aave({ healthFactor: 95n * 10n ** 16n }), 'v3.0')!;
    expect(full.debtToCover).toBe(40_000n * 10n ** 6n);
  });

  it('pays the 5% bonus: 20,000 USDC buys 10.5 WETH, profit 1,000 USD', () => {
    const out = maxLiquidation(aave(), 'v3.0')!;
    expect(out.collateralToLiquidator).toBe(105n * 10n ** 17n);
    expect(out.profitBase).toBe(1_000n * E8);
  });

  it('takes the protocol fee out of the bonus part only', () => {
    const out = availableCollateralToLiquidate(aave({ protocolFee: 1_000n }), 20_000n * 10n ** 6n);
    // bonus collateral 0.5 WETH, 10% of it to the protocol
    expect(out.protocolFee).toBe(5n * 10n ** 16n);
    expect(out.collateralToLiquidator).toBe(1045n * 10n ** 16n);
  });

  it('caps by the collateral balance and recomputes the debt needed', () => {
    const out = maxLiquidation(aave({ healthFactor: 9n * 10n ** 17n, collateralBalance: 10n * WAD }), 'v3.0')!;
    expect(out.collateralToLiquidator).toBe(10n * WAD);
    expect(out.debtToCover).toBe(percentDiv(20_000n * 10n ** 6n, 10_500n));
  });

  it('returns null for a healthy position', () => {
    expect(maxLiquidation(aave({ healthFactor: WAD }), 'v3.0')).toBeNull();
  });
});

describe('Aave v3.3 close factor and dust rules', () => {
  it('allows 100% when the debt or collateral reserve is below $2,000', () => {
    const small = aave({ reserveDebt: 1_500n * 10n ** 6n, totalDebtBase: 1_500n * E8, collateralBalance: WAD });
    expect(maxLiquidation(small, 'v3.3')!.debtToCover).toBe(1_500n * 10n ** 6n);
    expect(maxLiquidation(small, 'v3.0')!.debtToCover).toBe(750n * 10n ** 6n);
  });

  it('caps at 50% of the TOTAL debt above HF 0.95 for large positions', () => {
    const out = maxLiquidation(aave({ totalDebtBase: 60_000n * E8 }), 'v3.3')!;
    expect(out.debtToCover).toBe(30_000n * 10n ** 6n);
  });

  it('never leaves less than $1,000 of debt behind (MUST_NOT_LEAVE_DUST)', () => {
    // reserve debt 2,000 of a 3,000 total: 50% cap = 1,500 would leave 500 → repay at most 1,000 - a unit.
    const i = aave({ reserveDebt: 2_000n * 10n ** 6n, totalDebtBase: 3_000n * E8 });
    const out = maxLiquidation(i, 'v3.3')!;
    const left = ((i.reserveDebt - out.debtToCover) * i.debtPrice) / i.debtUnit;
    expect(left).toBeGreaterThanOrEqual(MIN_LEFTOVER_BASE);
    expect(out.debtToCover).toBeLessThan(1_500n * 10n ** 6n);
    expect(out.debtToCover).toBeGreaterThan(990n * 10n ** 6n);
  });
});

describe('Comet', () => {
  const weth = { balance: 10n * WAD, price: 2_000n * E8, scale: WAD, liquidateCollateralFactor: 895n * 10n ** 15n, liquidationFactor: 95n * 10n ** 16n };

  it('isLiquidatable sides: debt at the stored index vs collateral × liquidateCollateralFactor', () => {
    // 10 WETH at 2,000 × 0.895 = 17,900; debt 18,000 USDC principal at index 1.0
    const l = cometLiquidity(-18_000n * 10n ** 6n, 10n ** 15n, E8, 10n ** 6n, [weth]);
    expect(l.collateralValue).toBe(17_900n * E8);
    expect(l.debtValue).toBe(18_000n * E8);
    expect(l.liquidatable).toBe(true);
    expect(ratio(l.collateralValue, l.debtValue)).toBeCloseTo(0.99444, 5);
    expect(cometLiquidity(-17_000n * 10n ** 6n, 10n ** 15n, E8, 10n ** 6n, [weth]).liquidatable).toBe(false);
    expect(cometLiquidity(5n, 10n ** 15n, E8, 10n ** 6n, [weth]).liquidatable).toBe(false);
  });

  it('buys absorbed collateral at storeFront × (1 − liquidationFactor) discount', () => {
    const { baseAmount, discountFactor } = cometBuyCost(weth.balance, weth, 6n * 10n ** 17n, E8, 10n ** 6n);
    expect(discountFactor).toBe(3n * 10n ** 16n); // 3%
    expect(baseAmount).toBe(19_400n * 10n ** 6n); // 20,000 × 0.97
  });
});

describe('Morpho Blue', () => {
  it('liquidation incentive factor = min(1.15, 1/(1 − 0.3 × (1 − lltv)))', () => {
    expect(liquidationIncentiveFactor(86n * 10n ** 16n)).toBe((WAD * WAD) / (WAD - (3n * 10n ** 17n * 14n * 10n ** 16n) / WAD));
    expect(liquidationIncentiveFactor(0n)).toBe(115n * 10n ** 16n);
    expect(Number(liquidationIncentiveFactor(915n * 10n ** 15n)) / 1e18).toBeCloseTo(1.02617, 5);
  });

  it('wTaylorCompounded is e^(rt) − 1 to third order', () => {
    const rate = WAD / 31_536_000n; // 100% a year, per second
    const oneYear = Number(wTaylorCompounded(rate, 31_536_000n)) / 1e18;
    expect(oneYear).toBeCloseTo(1 + 1 / 2 + 1 / 6, 3);
  });

  it('health: maxBorrow = collateral × price / 1e36 × lltv vs borrowed rounded up', () => {
    const m = { totalBorrowAssets: 1_000_000n, totalBorrowShares: 1_000_000n * 10n ** 6n, price: (2_000n * 10n ** 36n) / 10n ** 12n, lltv: 86n * 10n ** 16n };
    // 1 WETH (1e18) at 2,000 USDC (6 decimals): maxBorrow 1,720 USDC
    const h = morphoHealth(1_800n * 10n ** 12n, WAD, m);
    expect(h.maxBorrow).toBe(1_720n * 10n ** 6n);
    expect(h.liquidatable).toBe(true);
    const liq = morphoMaxLiquidation(1_800n * 10n ** 12n, WAD, m);
    expect(liq.repaidShares).toBe(1_800n * 10n ** 12n);
    expect(Number(liq.profitLoan) / Number(liq.repaidAssets)).toBeCloseTo(Number(liq.lif) / 1e18 - 1, 4);
  });
});

describe('ratio', () => {
  it('keeps a liquidatable ratio strictly below 1', () => {
    expect(ratio(10n ** 30n - 1n, 10n ** 30n)).toBeLessThan(1);
    expect(ratio(3n, 2n)).toBe(1.5);
    expect(ratio(1n, 0n)).toBe(Number.POSITIVE_INFINITY);
  });
});
