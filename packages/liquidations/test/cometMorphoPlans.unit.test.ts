import { describe, expect, it } from 'vitest';
import {
  cometAbsorb,
  cometBuyCost,
  cometDiscountedPrice,
  cometBuyAll,
  cometPlanBuys,
  cometQuoteCollateral,
  type CometSeizedCollateral,
} from '../src/math/comet.js';
import { liquidationIncentiveFactor, morphoLargestLiquidation, morphoLiquidate, morphoMaxLiquidation, type MorphoMarketState } from '../src/math/morpho.js';

/**
 * The amount math of the Compound v3 and Morpho Blue planners (docs/liquidation-plans.md), against
 * the protocols' formulas written out here from `Comet.sol` and `Morpho.sol`. The dev chain runs
 * the same plans on the real contracts in `cometMorphoPlans.int.test.ts`.
 */

const WAD = 10n ** 18n;
const E8 = 10n ** 8n;

/** A deterministic 64-bit LCG, so a failing fuzz case can be replayed. */
function rng(seed: bigint) {
  let s = seed;
  return (max: bigint) => {
    s = (s * 6364136223846793005n + 1442695040888963407n) % (1n << 64n);
    return ((s >> 11n) * 0x9e3779b97f4a7c15n) % max;
  };
}

// ---------------------------------------------------------------- Compound v3

/** The dev Comet's WETH (price 2,000 USD, liquidationFactor 0.95) and USDC base (1 USD, 6 decimals); storeFrontPriceFactor 0.6. */
const SF = 6n * 10n ** 17n;
const USDC_PRICE = E8;
const USDC_SCALE = 10n ** 6n;
const weth = (balance: bigint, price = 2_000n * E8): CometSeizedCollateral<'WETH'> => ({
  asset: 'WETH',
  balance,
  price,
  scale: WAD,
  liquidationFactor: 95n * 10n ** 16n,
});
const wbtc = (balance: bigint, price = 60_000n * E8): CometSeizedCollateral<'WBTC'> => ({
  asset: 'WBTC',
  balance,
  price,
  scale: E8,
  liquidationFactor: 95n * 10n ** 16n,
});

/** Comet.quoteCollateral, written out: `basePrice * baseAmount * scale / assetPriceDiscounted / baseScale`. */
function quoteRef(baseAmount: bigint, c: CometSeizedCollateral, sf: bigint, basePrice: bigint, baseScale: bigint) {
  const discountFactor = (sf * (WAD - c.liquidationFactor)) / WAD;
  const assetPriceDiscounted = (c.price * (WAD - discountFactor)) / WAD;
  return (basePrice * baseAmount * c.scale) / assetPriceDiscounted / baseScale;
}

describe('Comet store front (quoteCollateral)', () => {
  it('sells at price × (1 − 0.6 × (1 − 0.95)): WETH at 1,940 USD', () => {
    expect(cometDiscountedPrice(weth(0n), SF)).toBe(1_940n * E8);
    // 1,940 USDC buys exactly 1 WETH; 1 USDC buys 1/1940 WETH, rounded down
    expect(cometQuoteCollateral(1_940n * USDC_SCALE, weth(0n), SF, USDC_PRICE, USDC_SCALE)).toBe(WAD);
    expect(cometQuoteCollateral(USDC_SCALE, weth(0n), SF, USDC_PRICE, USDC_SCALE)).toBe(WAD / 1_940n);
  });

  it('matches the contract formula on random inputs', () => {
    const r = rng(1n);
    for (let i = 0; i < 2_000; i++) {
      const c = { ...weth(0n, 1n + r(10n ** 14n)), liquidationFactor: r(WAD + 1n), scale: 10n ** r(19n) };
      const base = r(10n ** 15n);
      const basePrice = 1n + r(10n ** 10n);
      const sf = r(WAD + 1n);
      if (cometDiscountedPrice(c, sf) === 0n) continue;
      expect(cometQuoteCollateral(base, c, sf, basePrice, USDC_SCALE)).toBe(quoteRef(base, c, sf, basePrice, USDC_SCALE));
    }
  });
});

describe('cometBuyAll: buy all of a seized balance, for the least base, without asking for more', () => {
  it('48 WETH at 1,940: 93,120 USDC buys 48 WETH exactly', () => {
    expect(cometBuyAll(48n * WAD, weth(0n), SF, USDC_PRICE, USDC_SCALE)).toEqual({ baseAmount: 93_120n * USDC_SCALE, collateral: 48n * WAD });
  });

  it('buys the most collateral ≤ the balance, and pays the least base that buys it (fuzzed)', () => {
    const r = rng(2n);
    for (let i = 0; i < 3_000; i++) {
      const c = { ...weth(1n + r(10n ** 24n), 1n + r(10n ** 14n)), liquidationFactor: r(WAD), scale: 10n ** r(19n) };
      const basePrice = 1n + r(10n ** 10n);
      const baseScale = 10n ** r(19n);
      const { baseAmount, collateral } = cometBuyAll(c.balance, c, SF, basePrice, baseScale);
      if (collateral === 0n) {
        expect(baseAmount).toBe(0n);
        continue;
      }
      expect(quoteRef(baseAmount, c, SF, basePrice, baseScale)).toBe(collateral);
      expect(collateral).toBeLessThanOrEqual(c.balance);
      expect(quoteRef(baseAmount - 1n, c, SF, basePrice, baseScale)).toBeLessThan(collateral); // no cheaper base buys as much
      // no base amount buys more without going over the balance: the next quote above is > balance
      const step = cometBuyCost(collateral + 1n, c, SF, basePrice, baseScale).baseAmount;
      expect(quoteRef(step, c, SF, basePrice, baseScale)).toBeGreaterThan(c.balance);
    }
  });

  it('leaves dust rather than overshoot when one base unit buys many collateral units', () => {
    const c = weth(10n ** 18n + 12_345n); // 1 WETH + 12,345 wei; 1 USDC unit (1e-6) buys ~5.15e8 wei
    const { baseAmount, collateral } = cometBuyAll(c.balance, c, SF, USDC_PRICE, USDC_SCALE);
    expect(collateral).toBeLessThanOrEqual(c.balance);
    expect(c.balance - collateral).toBeLessThan(WAD / (1_940n * USDC_SCALE) + 1n);
    expect(baseAmount).toBe(1_940n * USDC_SCALE);
    // the rounded-up inverse would ask for more than there is (InsufficientReserves)
    const up = cometBuyCost(c.balance, c, SF, USDC_PRICE, USDC_SCALE).baseAmount;
    expect(cometQuoteCollateral(up, c, SF, USDC_PRICE, USDC_SCALE)).toBeGreaterThan(c.balance);
  });

  it('pays the least base when one collateral unit costs many base units (WBTC, 8 decimals, against an 18-decimal base)', () => {
    const c = wbtc(123_456_789n);
    const { baseAmount, collateral } = cometBuyAll(c.balance, c, SF, E8, WAD);
    expect(collateral).toBe(c.balance);
    expect(quoteRef(baseAmount - 1n, c, SF, E8, WAD)).toBe(c.balance - 1n);
  });
});

describe('cometAbsorb (absorbInternal)', () => {
  it('values collateral at liquidationFactor and writes the debt off against reserves', () => {
    // 48 WETH × 2,000 × 0.95 = 91,200 USDC of value against 100,000 USDC of debt: no surplus
    const short = cometAbsorb(100_000n * USDC_SCALE, USDC_PRICE, USDC_SCALE, [weth(48n * WAD)]);
    expect(short.deltaBalance).toBe(91_200n * USDC_SCALE);
    expect(short.surplus).toBe(0n);
    expect(short.reservesDrop).toBe(100_000n * USDC_SCALE);
    // against 80,000 of debt the 11,200 left over is credited to the account: reserves fall by 91,200
    const over = cometAbsorb(80_000n * USDC_SCALE, USDC_PRICE, USDC_SCALE, [weth(48n * WAD), wbtc(0n)]);
    expect(over.surplus).toBe(11_200n * USDC_SCALE);
    expect(over.reservesDrop).toBe(91_200n * USDC_SCALE);
  });
});

describe('cometPlanBuys: buyCollateral while reserves < targetReserves', () => {
  const target = 5_000_000n * USDC_SCALE;
  const plan = (reservesAfterAbsorb: bigint, collaterals: CometSeizedCollateral<'WETH' | 'WBTC'>[]) =>
    cometPlanBuys({ reservesAfterAbsorb, targetReserves: target, storeFrontPriceFactor: SF, basePrice: USDC_PRICE, baseScale: USDC_SCALE, collaterals });

  it('buys every asset when reserves are negative after the absorb', () => {
    const out = plan(-100_000n * USDC_SCALE, [weth(10n * WAD), wbtc(E8)]);
    // the larger discount first: 1 WBTC × 1,800 USD off, then 10 WETH × 60 USD off
    expect(out.buys).toEqual([
      { asset: 'WBTC', baseAmount: 58_200n * USDC_SCALE, collateral: E8 },
      { asset: 'WETH', baseAmount: 19_400n * USDC_SCALE, collateral: 10n * WAD },
    ]);
    expect(out.baseTotal).toBe(77_600n * USDC_SCALE);
    expect(out.notForSale).toEqual([]);
  });

  it('sells nothing when reserves are exactly at the target (NotForSale)', () => {
    const out = plan(target, [weth(10n * WAD)]);
    expect(out.buys).toEqual([]);
    expect(out.baseTotal).toBe(0n);
    expect(out.notForSale).toEqual(['WETH']);
  });

  it('one unit below the target: the first buy goes through, and the reserves it adds stop the next one', () => {
    const out = plan(target - 1n, [wbtc(E8), weth(40n * WAD)]);
    // WETH's discount is worth more (40 × 60 USD > 1 × 1,800 USD): it is bought first
    expect(out.buys.map((b) => b.asset)).toEqual(['WETH']);
    expect(out.notForSale).toEqual(['WBTC']);
    expect(out.reservesAfter).toBe(target - 1n + 77_600n * USDC_SCALE);
  });

  it('skips an asset too small to buy with one base unit', () => {
    const out = plan(0n, [weth(1_000n)]);
    expect(out.buys).toEqual([]);
    expect(out.notForSale).toEqual([]);
  });

  it('with targetReserves 0, sells only while reserves are negative', () => {
    const zero = (r: bigint) =>
      cometPlanBuys({
        reservesAfterAbsorb: r,
        targetReserves: 0n,
        storeFrontPriceFactor: SF,
        basePrice: USDC_PRICE,
        baseScale: USDC_SCALE,
        collaterals: [weth(WAD)],
      });
    expect(zero(-1n).buys).toHaveLength(1);
    expect(zero(0n).buys).toHaveLength(0);
  });
});

// ---------------------------------------------------------------- Morpho Blue

const LLTV = 860_000_000_000_000_000n; // the dev WETH/USDC market
/** Oracle price of 1 WETH (18 decimals) in USDC (6 decimals), scaled 1e36. */
const wethPrice = (usd: bigint) => (usd * 10n ** 6n * 10n ** 36n) / 10n ** 18n;
const VS = 10n ** 6n;

/** Morpho's liquidate arithmetic, written out from Morpho.sol for the cases the tests pick. */
const lif = (lltv: bigint) => {
  const f = (WAD * WAD) / (WAD - (3n * 10n ** 17n * (WAD - lltv)) / WAD);
  return f < 115n * 10n ** 16n ? f : 115n * 10n ** 16n;
};

describe('morphoLiquidate and morphoLargestLiquidation (Morpho.liquidate, no close factor)', () => {
  // 40,000 USDC borrowed by one borrower among 1,000,000 USDC of market borrows; shares = assets × 1e6
  const m = (price: bigint, o: Partial<MorphoMarketState> = {}): MorphoMarketState => ({
    totalBorrowAssets: 1_000_000n * 10n ** 6n,
    totalBorrowShares: 1_000_000n * 10n ** 12n,
    price,
    lltv: LLTV,
    ...o,
  });
  const position = { borrowShares: 40_000n * 10n ** 12n, collateral: 24n * WAD };

  it('LIF = min(1.15, 1 / (1 − 0.3 × (1 − LLTV)))', () => {
    expect(liquidationIncentiveFactor(LLTV)).toBe(lif(LLTV));
    expect(liquidationIncentiveFactor(LLTV)).toBe(1_043_841_336_116_910_229n);
    expect(liquidationIncentiveFactor(0n)).toBe(115n * 10n ** 16n);
  });

  it('repays all the shares when the collateral covers them; repaid assets rounded up', () => {
    const state = m(wethPrice(1_900n)); // 24 WETH × 1,900 = 45,600 ≥ 40,000 × 1.0438
    const best = morphoLargestLiquidation(position, state)!;
    expect(best.args).toEqual({ seizedAssets: 0n, repaidShares: position.borrowShares });
    const assetsDown = (position.borrowShares * (state.totalBorrowAssets + 1n)) / (state.totalBorrowShares + VS);
    const assetsUp = (position.borrowShares * (state.totalBorrowAssets + 1n) + state.totalBorrowShares + VS - 1n) / (state.totalBorrowShares + VS);
    expect(best.outcome.repaidAssets).toBe(assetsUp);
    expect(best.outcome.seizedAssets).toBe((((assetsDown * lif(LLTV)) / WAD) * 10n ** 36n) / state.price);
    expect(best.outcome.seizedAssets).toBeLessThan(position.collateral);
    expect(best.outcome.badDebtShares).toBe(0n);
    // the search's numbers (morphoMaxLiquidation) are the plan's
    const search = morphoMaxLiquidation(position.borrowShares, position.collateral, state);
    expect([search.repaidAssets, search.seizedAssets]).toEqual([best.outcome.repaidAssets, best.outcome.seizedAssets]);
  });

  it('bad debt: seizes all the collateral when it is short, and the shares left are written off', () => {
    const state = m(wethPrice(1_500n)); // 24 × 1,500 = 36,000 < 40,000 × 1.0438
    const best = morphoLargestLiquidation(position, state)!;
    expect(best.args).toEqual({ seizedAssets: position.collateral, repaidShares: 0n });
    const quoted = (position.collateral * state.price + 10n ** 36n - 1n) / 10n ** 36n;
    const assets = (quoted * WAD + lif(LLTV) - 1n) / lif(LLTV);
    const shares = (assets * (state.totalBorrowShares + VS) + state.totalBorrowAssets) / (state.totalBorrowAssets + 1n);
    expect(best.outcome.repaidShares).toBe(shares);
    expect(best.outcome.seizedAssets).toBe(position.collateral);
    expect(best.outcome.badDebtShares).toBe(position.borrowShares - shares);
    const tba = state.totalBorrowAssets - best.outcome.repaidAssets;
    const tbs = state.totalBorrowShares - shares;
    expect(best.outcome.badDebtAssets).toBe((best.outcome.badDebtShares * (tba + 1n) + tbs + VS - 1n) / (tbs + VS));
    // the shares path would seize more than there is: the contract would revert on the subtraction
    expect(morphoLiquidate({ seizedAssets: 0n, repaidShares: position.borrowShares }, position, state)).toBeUndefined();
  });

  it('refuses what the contract refuses', () => {
    const state = m(wethPrice(1_900n));
    expect(morphoLiquidate({ seizedAssets: 0n, repaidShares: 0n }, position, state)).toBeUndefined(); // INCONSISTENT_INPUT
    expect(morphoLiquidate({ seizedAssets: 1n, repaidShares: 1n }, position, state)).toBeUndefined(); // INCONSISTENT_INPUT
    expect(morphoLiquidate({ seizedAssets: 0n, repaidShares: position.borrowShares + 1n }, position, state)).toBeUndefined();
    expect(morphoLiquidate({ seizedAssets: position.collateral + 1n, repaidShares: 0n }, position, state)).toBeUndefined();
    expect(morphoLiquidate({ seizedAssets: 0n, repaidShares: 1n }, position, m(0n))).toBeUndefined(); // division by a zero price
    expect(morphoLargestLiquidation({ ...position, collateral: 0n }, state)).toBeUndefined();
    expect(morphoLargestLiquidation({ ...position, borrowShares: 0n }, state)).toBeUndefined();
  });

  it('always finds one of the two full liquidations, and the one it picks is the largest (fuzzed, tiny amounts included)', () => {
    const r = rng(3n);
    for (let i = 0; i < 5_000; i++) {
      const small = i % 2 === 0;
      const totalBorrowShares = small ? VS * (1n + r(1_000n)) + r(VS) : VS * (1n + r(10n ** 15n));
      const totalBorrowAssets = small ? 1n + r(1_000n) : 1n + r(10n ** 15n);
      const state: MorphoMarketState = {
        totalBorrowAssets,
        totalBorrowShares,
        price: small ? 10n ** 34n * (1n + r(10_000n)) + r(10n ** 34n) : 1n + r(10n ** 40n),
        lltv: [LLTV, 915n * 10n ** 15n, 945n * 10n ** 15n, 5n * 10n ** 17n][Number(r(4n))],
      };
      const pos = { borrowShares: 1n + r(totalBorrowShares), collateral: 1n + r(small ? 1_000n : 10n ** 24n) };
      const best = morphoLargestLiquidation(pos, state);
      expect(
        best,
        JSON.stringify(pos, (_, v) => (typeof v === 'bigint' ? v.toString() : v)),
      ).toBeDefined();
      const { args, outcome } = best!;
      expect(outcome.repaidShares).toBeLessThanOrEqual(pos.borrowShares);
      expect(outcome.seizedAssets).toBeLessThanOrEqual(pos.collateral);
      if (args.repaidShares > 0n) {
        expect(args.repaidShares).toBe(pos.borrowShares); // all the debt
      } else {
        expect(args.seizedAssets).toBe(pos.collateral); // all the collateral, because all the debt does not fit
        expect(morphoLiquidate({ seizedAssets: 0n, repaidShares: pos.borrowShares }, pos, state)).toBeUndefined();
        expect(outcome.badDebtShares).toBe(pos.borrowShares - outcome.repaidShares);
      }
    }
  });
});
