import { erc20Abi, getAddress, keccak256, parseUnits, stringToHex, type Address, type Hex } from 'viem';
import type { LendingProtocol } from '@acg/schemas';
import { devAccount, DEV_ROLES, SEARCHER_DEBT_FUNDS } from '../accounts.js';
import { aaveArtifact } from './artifacts.js';
import { compileLendingContracts } from './compile.js';
import { AAVE_RESERVES, COMET_ASSETS, INITIAL_PRICES, MORPHO_LLTV, SPARK_RESERVES, type DevTokenSymbol, type LendingDeployment } from './deploy.js';
import { DevSender } from './tx.js';

/** USD prices after seeding: WETH falls from 2,500 to 2,000 (-20%), which makes the seeded positions what their labels say. */
export const SEED_PRICES: Record<DevTokenSymbol, number> = { ...INITIAL_PRICES, WETH: 2000 };

/** What a seeded position is meant to be at {@link SEED_PRICES}: `health_factor` > 1.1, 1 to 1.1, or < 1 (and < 0.95). */
export type SeedLabel = 'healthy' | 'at_risk' | 'liquidatable' | 'deeply_liquidatable';

/** One borrower opened by {@link seedLendingPositions}. */
export type SeededPosition = {
  protocol: LendingProtocol;
  borrower: Address;
  collateral: DevTokenSymbol;
  debt: DevTokenSymbol;
  /** Collateral supplied, token units (decimal number). */
  collateralAmount: number;
  /** Health factor aimed at, at {@link SEED_PRICES} (interest moves it slowly afterwards). */
  targetHealthFactor: number;
  label: SeedLabel;
  /** Morpho Blue market id, for `morpho_blue`. */
  marketId?: Hex;
};

/** The positions every protocol gets (amounts scaled per protocol so profits differ across protocols). */
export const SEED_PLAN: { collateral: DevTokenSymbol; amount: number; target: number; label: SeedLabel }[] = [
  { collateral: 'WETH', amount: 10, target: 1.6, label: 'healthy' },
  { collateral: 'WETH', amount: 25, target: 1.05, label: 'at_risk' },
  { collateral: 'WETH', amount: 40, target: 0.97, label: 'liquidatable' },
  { collateral: 'WETH', amount: 15, target: 0.9, label: 'deeply_liquidatable' },
  { collateral: 'WBTC', amount: 2, target: 1.5, label: 'healthy' },
  { collateral: 'WBTC', amount: 1, target: 1.08, label: 'at_risk' },
];

const SCALE: Record<LendingProtocol, number> = { aave_v3: 1, spark: 0.8, compound_v3: 1.2, morpho_blue: 0.6 };

/** The deterministic borrower address number `i` of `protocol` (impersonated on anvil; no key exists). */
export function seedBorrower(protocol: LendingProtocol, i: number): Address {
  return getAddress(`0x${keccak256(stringToHex(`acg-lending-borrower-${protocol}-${i}`)).slice(26)}`);
}

const units = (amount: number, decimals: number) => parseUnits(amount.toFixed(Math.min(decimals, 8)), decimals);

/**
 * Opens healthy, at-risk and liquidatable positions on the four dev protocols, then moves the WETH
 * feed to {@link SEED_PRICES}. Positions are opened at {@link INITIAL_PRICES} with a debt sized so
 * that their health factor at the seed prices is `target` (each protocol's own liquidation
 * threshold: Aave/Spark `liquidationThreshold`, Comet `liquidateCollateralFactor`, Morpho `lltv`).
 * Dev account 0 supplies the borrowed liquidity. Borrowers are impersonated addresses.
 *
 * @returns The seeded positions, {@link SEED_PLAN} for each protocol (24 in all).
 */
export async function seedLendingPositions(rpcUrl: string, dep: LendingDeployment): Promise<SeededPosition[]> {
  const tx = new DevSender(rpcUrl);
  const C = compileLendingContracts();
  const poolAbi = aaveArtifact('Pool').abi;
  const tokenAbi = C.DevToken.abi;
  const lender = dep.deployer;
  const max = 2n ** 256n - 1n;
  const mint = (token: DevTokenSymbol, to: Address, amount: bigint) => tx.write(lender, dep.tokens[token].address, tokenAbi, 'mint', [to, amount]);
  const approve = (from: Address, token: DevTokenSymbol, spender: Address) => tx.write(from, dep.tokens[token].address, erc20Abi, 'approve', [spender, max]);

  // Liquidity: 50M of each borrowed asset.
  const liquidity = (t: DevTokenSymbol) => units(50_000_000, dep.tokens[t].decimals);
  await mint('USDC', lender, liquidity('USDC') * 4n);
  await mint('DAI', lender, liquidity('DAI'));
  await approve(lender, 'USDC', dep.aave.pool);
  await tx.write(lender, dep.aave.pool, poolAbi, 'supply', [dep.tokens.USDC.address, liquidity('USDC'), lender, 0]);
  await approve(lender, 'DAI', dep.spark.pool);
  await tx.write(lender, dep.spark.pool, poolAbi, 'supply', [dep.tokens.DAI.address, liquidity('DAI'), lender, 0]);
  await approve(lender, 'USDC', dep.comet.address);
  await tx.write(lender, dep.comet.address, C.DevComet.abi, 'supply', [dep.tokens.USDC.address, liquidity('USDC')]);
  await approve(lender, 'USDC', dep.morpho.address);
  for (const m of Object.values(dep.morpho.markets)) {
    await tx.write(lender, dep.morpho.address, C.Morpho.abi, 'supply', [m.params, liquidity('USDC'), 0n, lender, '0x']);
  }

  // The dev liquidation searcher holds the debt assets it repays with (mev.liquidation_plan, docs/liquidation-plans.md).
  await fundSearcher(rpcUrl, dep);

  const positions: SeededPosition[] = [];
  for (const protocol of ['aave_v3', 'spark', 'compound_v3', 'morpho_blue'] as const) {
    for (const [i, plan] of SEED_PLAN.entries()) {
      const borrower = seedBorrower(protocol, i);
      await tx.fund(borrower);
      const coll = dep.tokens[plan.collateral];
      const debtSymbol: DevTokenSymbol = protocol === 'spark' ? 'DAI' : 'USDC';
      const debt = dep.tokens[debtSymbol];
      const amount = plan.amount * SCALE[protocol];
      const collAmount = units(amount, coll.decimals);
      const threshold = liquidationThreshold(protocol, plan.collateral);
      const debtUsd = (amount * SEED_PRICES[plan.collateral] * threshold) / plan.target;
      const debtAmount = units(debtUsd / SEED_PRICES[debtSymbol], debt.decimals);
      await mint(plan.collateral, borrower, collAmount);
      let marketId: Hex | undefined;
      if (protocol === 'aave_v3' || protocol === 'spark') {
        const pool = protocol === 'aave_v3' ? dep.aave.pool : dep.spark.pool;
        await approve(borrower, plan.collateral, pool);
        await tx.write(borrower, pool, poolAbi, 'supply', [coll.address, collAmount, borrower, 0]);
        await tx.write(borrower, pool, poolAbi, 'borrow', [debt.address, debtAmount, 2n, 0, borrower]);
      } else if (protocol === 'compound_v3') {
        await approve(borrower, plan.collateral, dep.comet.address);
        await tx.write(borrower, dep.comet.address, C.DevComet.abi, 'supply', [coll.address, collAmount]);
        await tx.write(borrower, dep.comet.address, C.DevComet.abi, 'withdraw', [debt.address, debtAmount]);
      } else {
        const market = dep.morpho.markets[`${plan.collateral}/USDC` as 'WETH/USDC' | 'WBTC/USDC'];
        marketId = market.id;
        await approve(borrower, plan.collateral, dep.morpho.address);
        await tx.write(borrower, dep.morpho.address, C.Morpho.abi, 'supplyCollateral', [market.params, collAmount, borrower, '0x']);
        await tx.write(borrower, dep.morpho.address, C.Morpho.abi, 'borrow', [market.params, debtAmount, 0n, borrower, borrower]);
      }
      positions.push({
        protocol,
        borrower,
        collateral: plan.collateral,
        debt: debtSymbol,
        collateralAmount: amount,
        targetHealthFactor: plan.target,
        label: plan.label,
        ...(marketId ? { marketId } : {}),
      });
    }
  }
  await setDevPrice(rpcUrl, dep, 'WETH', SEED_PRICES.WETH);
  return positions;
}

/**
 * Tops `searcher` (default `DEV_ROLES.searcher`) up to {@link SEARCHER_DEBT_FUNDS} whole tokens of
 * each debt asset of the lending dev data (USDC: Aave, Comet, Morpho; DAI: Spark), minted by the
 * deployer. Idempotent: a second call mints only what was spent.
 */
export async function fundSearcher(rpcUrl: string, dep: LendingDeployment, searcher: Address = devAccount(DEV_ROLES.searcher).address): Promise<void> {
  const tx = new DevSender(rpcUrl);
  const tokenAbi = compileLendingContracts().DevToken.abi;
  for (const symbol of ['USDC', 'DAI'] as const) {
    const t = dep.tokens[symbol];
    const want = units(SEARCHER_DEBT_FUNDS, t.decimals);
    const has = (await tx.client.readContract({ address: t.address, abi: erc20Abi, functionName: 'balanceOf', args: [searcher] })) as bigint;
    if (has < want) await tx.write(dep.deployer, t.address, tokenAbi, 'mint', [searcher, want - has]);
  }
}

/** The threshold each protocol's health factor uses for `collateral` (unitless fraction). */
function liquidationThreshold(protocol: LendingProtocol, collateral: DevTokenSymbol): number {
  if (protocol === 'aave_v3') return AAVE_RESERVES[collateral]!.liquidationThreshold / 1e4;
  if (protocol === 'spark') return SPARK_RESERVES[collateral]!.liquidationThreshold / 1e4;
  if (protocol === 'compound_v3') return COMET_ASSETS.find((a) => a.symbol === collateral)!.liquidateCF;
  return Number(MORPHO_LLTV[`${collateral}/USDC` as keyof typeof MORPHO_LLTV]) / 1e18;
}

/**
 * Sets the USD price of a dev token (its DevPriceFeed, 8 decimals), which every protocol reads:
 * AaveOracle (Aave and Spark), Comet `getPrice`, and the Morpho oracles of the markets using it.
 *
 * @param usd - New price in USD (e.g. 1800.5).
 * @returns The block number that carries the change.
 */
export async function setDevPrice(rpcUrl: string, dep: LendingDeployment, symbol: DevTokenSymbol, usd: number): Promise<bigint> {
  const tx = new DevSender(rpcUrl);
  const receipt = await tx.write(dep.deployer, dep.tokens[symbol].feed, compileLendingContracts().DevPriceFeed.abi, 'setAnswer', [
    BigInt(Math.round(usd * 1e8)),
  ]);
  return receipt.blockNumber;
}
