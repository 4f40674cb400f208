import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';
import { compileCached, gatherSources, requireDevnetDep, type SolcJs } from '../solcCompile.js';

/** One compiled contract: ABI and creation bytecode (no libraries to link). */
export type CompiledContract = { abi: Abi; bytecode: Hex };

/** Every contract of the lending dev data that is compiled from source (not taken from an artifact). */
export type LendingContractName = 'Morpho' | 'IrmMock' | 'DevToken' | 'DevPriceFeed' | 'DevMorphoOracle' | 'DevComet' | 'MorphoHealthLens';

/** Source unit of each contract, as named in the solc standard-JSON input. */
const UNITS: Record<LendingContractName, string> = {
  Morpho: 'morpho-blue/src/Morpho.sol',
  IrmMock: 'morpho-blue/src/mocks/IrmMock.sol',
  DevToken: 'acg/DevToken.sol',
  DevPriceFeed: 'acg/DevPriceFeed.sol',
  DevMorphoOracle: 'acg/DevMorphoOracle.sol',
  DevComet: 'acg/DevComet.sol',
  MorphoHealthLens: 'acg/MorphoHealthLens.sol',
};

/** The exact compiler Morpho Blue pins (`pragma solidity 0.8.19`), from the npm package `solc`. */
export const SOLC_VERSION = '0.8.19';

let memo: Record<LendingContractName, CompiledContract> | undefined;

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

function morphoRoot(): string {
  return path.dirname(require.resolve('@morpho-org/morpho-blue/package.json'));
}

/** Reads a source unit: `acg/X.sol` from ./contracts, `morpho-blue/...` from the npm package. */
function readUnit(unit: string): string {
  if (unit.startsWith('acg/')) return readFileSync(path.join(here, 'contracts', unit.slice(4)), 'utf8');
  if (unit.startsWith('morpho-blue/')) return readFileSync(path.join(morphoRoot(), unit.slice('morpho-blue/'.length)), 'utf8');
  throw new Error(`compileLendingContracts: unknown import ${unit}`);
}

/**
 * Compiles Morpho Blue (the real sources of the npm package `@morpho-org/morpho-blue`, with its
 * `IrmMock`) and our own dev contracts (`./contracts/*.sol`: ERC-20 tokens, Chainlink-style price
 * feeds, the Morpho oracle, the Comet-ABI-compatible market and the Morpho health lens) with solc-js
 * 0.8.19 (npm `solc`), optimizer on (200 runs) with `viaIR` (as Morpho Blue is built), EVM `paris`.
 *
 * The output is cached on disk under `node_modules/.cache/acg-lending/<sha256 of the input>.json`
 * (and in memory), so only the first run on a clean clone pays the compile (about 20-40 s with
 * solc-js); later runs read the JSON in milliseconds. A changed source changes the hash.
 *
 * @returns ABI and creation bytecode of each {@link LendingContractName}.
 * @throws {Error} If solc reports an error (the message lists them) or the packages are missing.
 */
export function compileLendingContracts(): Record<LendingContractName, CompiledContract> {
  if (memo) return memo;
  const input = {
    language: 'Solidity',
    sources: gatherSources(Object.values(UNITS), readUnit),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      viaIR: true,
      evmVersion: 'paris',
      outputSelection: Object.fromEntries(Object.values(UNITS).map((u) => [u, { '*': ['abi', 'evm.bytecode.object'] }])),
    },
  };
  memo = compileCached<Record<LendingContractName, CompiledContract>, { abi: Abi; evm: { bytecode: { object: string } } }>({
    label: 'compileLendingContracts',
    version: SOLC_VERSION,
    cacheName: 'acg-lending',
    input,
    // solc 0.8.19 is a dependency of @acg/devnet (npm may nest it in apps/launcher/node_modules)
    loadSolc: () => requireDevnetDep<SolcJs>('solc'),
    extract: (output) => {
      const result = {} as Record<LendingContractName, CompiledContract>;
      for (const [name, unit] of Object.entries(UNITS) as [LendingContractName, string][]) {
        const c = output.contracts?.[unit]?.[name];
        if (!c?.evm.bytecode.object) throw new Error(`compileLendingContracts: no bytecode for ${name}`);
        result[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
      }
      return result;
    },
  });
  return memo;
}
