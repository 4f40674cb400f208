import type { LendingProtocol } from '@acg/schemas';

/**
 * Gas one liquidation takes, by protocol (units), used for `estimated_profit_usd = gross − gas`.
 * Measured on the dev chain (real Aave v3.0.2 and Morpho Blue bytecode, DevComet) and rounded up
 * towards mainnet receipts, which pay more for proxies, oracles and cold storage:
 * Aave/Spark `liquidationCall` ~ 300-450k; Comet `absorb` of one account plus one `buyCollateral`
 * ~ 250k (each further collateral asset adds a `buyCollateral`, ~ 80k, counted by the adapter);
 * Morpho Blue `liquidate` ~ 120-160k. A searcher's own swap is not included.
 * Override per deployment with the indexer's `gasUnits`.
 */
export const DEFAULT_GAS_UNITS: Record<LendingProtocol, number> = {
  aave_v3: 400_000,
  spark: 400_000,
  compound_v3: 250_000,
  morpho_blue: 160_000,
};

/** Gas of each further `buyCollateral` on Comet (units). */
export const COMET_EXTRA_ASSET_GAS = 80_000;

/**
 * Gas cost in USD: `gasUnits × baseFeePerGas` (wei) × ETH price in USD / 1e18.
 * The base fee is the block's (EIP-1559); no priority fee is added (searchers pay builders
 * separately, e.g. by coinbase transfer).
 */
export function gasCostUsd(gasUnits: number, baseFeePerGas: bigint, ethUsd: number): number {
  return (gasUnits * Number(baseFeePerGas) * ethUsd) / 1e18;
}
