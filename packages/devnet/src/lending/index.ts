/**
 * Lending dev data for the liquidation search (docs/decisions.md "Liquidation search", dev data): real Aave v3
 * (twice: Aave and Spark) from `@aave/core-v3` artifacts, real Morpho Blue compiled from
 * `@morpho-org/morpho-blue` with solc-js, a Comet-ABI-compatible market of our own, price feeds we
 * control and a seed of healthy, at-risk and liquidatable positions. Used by tests, the bench and
 * the launcher (on the Ethereum dev chain, chain id 1).
 */
import type { Address } from 'viem';
import { installMulticall3 } from '../multicall3.js';
import { deployLendingProtocols, type LendingDeployment } from './deploy.js';
import { seedLendingPositions, type SeededPosition } from './seed.js';

export { compileLendingContracts, SOLC_VERSION, type CompiledContract, type LendingContractName } from './compile.js';
export {
  AAVE_RESERVES,
  COMET_ASSETS,
  COMET_STORE_FRONT_PRICE_FACTOR,
  deployLendingProtocols,
  INITIAL_PRICES,
  MORPHO_LLTV,
  morphoMarketId,
  SPARK_RESERVES,
  type AaveMarketInfo,
  type AaveReserveSpec,
  type DevToken,
  type DevTokenSymbol,
  type LendingDeployment,
  type MorphoMarketInfo,
} from './deploy.js';
export { fundSearcher, SEED_PLAN, SEED_PRICES, seedBorrower, seedLendingPositions, setDevPrice, type SeededPosition, type SeedLabel } from './seed.js';
export { aaveArtifact, aaveCoreVersion } from './artifacts.js';
export { DevSender } from './tx.js';

/** Deployments in the shape of `@acg/liquidations` `ProtocolDeployment` (structurally typed here). */
export type LendingIndexerDeployments = (
  | { protocol: 'aave_v3' | 'spark'; pool: Address; startBlock: bigint; closeFactorRules: 'v3.0' | 'v3.3' }
  | { protocol: 'compound_v3'; comet: Address; startBlock: bigint }
  | { protocol: 'morpho_blue'; morpho: Address; startBlock: bigint }
)[];

/**
 * What an indexer of the dev chain needs: the four deployments and the USD feeds.
 * Both Aave and Spark run `@aave/core-v3` 1.19.x bytecode, which is aave-v3-core v3.0.2, so both
 * are indexed with the `v3.0` close-factor rules the deployed code enforces (production Aave is
 * v3.3+ and is indexed with `v3.3`; see packages/liquidations/README.md).
 */
export function lendingIndexerConfig(dep: LendingDeployment): {
  deployments: LendingIndexerDeployments;
  usdFeeds: Record<Address, Address>;
  nativeToken: Address;
} {
  return {
    deployments: [
      { protocol: 'aave_v3', pool: dep.aave.pool, startBlock: dep.startBlock, closeFactorRules: 'v3.0' },
      { protocol: 'spark', pool: dep.spark.pool, startBlock: dep.startBlock, closeFactorRules: 'v3.0' },
      { protocol: 'compound_v3', comet: dep.comet.address, startBlock: dep.startBlock },
      { protocol: 'morpho_blue', morpho: dep.morpho.address, startBlock: dep.startBlock },
    ],
    usdFeeds: Object.fromEntries(Object.values(dep.tokens).map((t) => [t.address, t.feed])),
    nativeToken: dep.tokens.WETH.address,
  };
}

/** The lending dev data, deployed and seeded. */
export type LendingDevnet = { deployment: LendingDeployment; positions: SeededPosition[] };

/**
 * Installs Multicall3, deploys the four protocols and seeds positions on an anvil node
 * (about 1.5 s; the first run on a clean clone also compiles Morpho Blue with solc-js, ~40 s,
 * cached under node_modules/.cache/acg-lending).
 */
export async function setupLendingDevnet(rpcUrl: string): Promise<LendingDevnet> {
  await installMulticall3(rpcUrl);
  const deployment = await deployLendingProtocols(rpcUrl);
  const positions = await seedLendingPositions(rpcUrl, deployment);
  return { deployment, positions };
}
