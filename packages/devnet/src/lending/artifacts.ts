import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Abi, Address, Hex } from 'viem';
import { linkBytecode, type HardhatArtifact } from '../artifacts.js';

const require = createRequire(import.meta.url);
const cache = new Map<string, HardhatArtifact>();

/** Aave v3 contracts deployed from the npm package `@aave/core-v3` (v1.19.x = aave-v3-core v3.0.2). */
export const AAVE_ARTIFACTS = {
  PoolAddressesProvider: 'protocol/configuration/PoolAddressesProvider.sol/PoolAddressesProvider',
  ACLManager: 'protocol/configuration/ACLManager.sol/ACLManager',
  Pool: 'protocol/pool/Pool.sol/Pool',
  PoolConfigurator: 'protocol/pool/PoolConfigurator.sol/PoolConfigurator',
  AaveOracle: 'misc/AaveOracle.sol/AaveOracle',
  AaveProtocolDataProvider: 'misc/AaveProtocolDataProvider.sol/AaveProtocolDataProvider',
  AToken: 'protocol/tokenization/AToken.sol/AToken',
  StableDebtToken: 'protocol/tokenization/StableDebtToken.sol/StableDebtToken',
  VariableDebtToken: 'protocol/tokenization/VariableDebtToken.sol/VariableDebtToken',
  DefaultReserveInterestRateStrategy: 'protocol/pool/DefaultReserveInterestRateStrategy.sol/DefaultReserveInterestRateStrategy',
  BorrowLogic: 'protocol/libraries/logic/BorrowLogic.sol/BorrowLogic',
  BridgeLogic: 'protocol/libraries/logic/BridgeLogic.sol/BridgeLogic',
  EModeLogic: 'protocol/libraries/logic/EModeLogic.sol/EModeLogic',
  FlashLoanLogic: 'protocol/libraries/logic/FlashLoanLogic.sol/FlashLoanLogic',
  LiquidationLogic: 'protocol/libraries/logic/LiquidationLogic.sol/LiquidationLogic',
  PoolLogic: 'protocol/libraries/logic/PoolLogic.sol/PoolLogic',
  SupplyLogic: 'protocol/libraries/logic/SupplyLogic.sol/SupplyLogic',
  ConfiguratorLogic: 'protocol/libraries/logic/ConfiguratorLogic.sol/ConfiguratorLogic',
} as const;

export type AaveArtifactName = keyof typeof AAVE_ARTIFACTS;

/** A Hardhat artifact of `@aave/core-v3` by contract name (cached). */
export function aaveArtifact(name: AaveArtifactName): HardhatArtifact {
  let a = cache.get(name);
  if (!a) {
    const root = path.join(path.dirname(require.resolve('@aave/core-v3/package.json')), 'artifacts/contracts');
    a = JSON.parse(readFileSync(path.join(root, `${AAVE_ARTIFACTS[name]}.json`), 'utf8')) as HardhatArtifact;
    cache.set(name, a);
  }
  return a;
}

/** The version string of the installed `@aave/core-v3` (e.g. `1.19.3`). */
export function aaveCoreVersion(): string {
  return (require('@aave/core-v3/package.json') as { version: string }).version;
}

/** Creation bytecode of an Aave artifact with its libraries linked. */
export function aaveBytecode(name: AaveArtifactName, libraries: Record<string, Address> = {}): { abi: Abi; bytecode: Hex } {
  const a = aaveArtifact(name);
  return { abi: a.abi, bytecode: linkBytecode(a.bytecode, a.linkReferences, libraries) };
}
