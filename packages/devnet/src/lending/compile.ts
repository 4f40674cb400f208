import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';

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

/**
 * solc 0.8.19 is a dependency of @acg/devnet (npm may nest it in apps/devnet/node_modules): resolve
 * it from this module, or, when bundled into dist/, from the @acg/devnet package.
 */
function loadSolc(): { version(): string; compile(input: string): string } {
  try {
    return require('solc');
  } catch {
    return createRequire(require.resolve('@acg/devnet/package.json'))('solc');
  }
}

function morphoRoot(): string {
  return path.dirname(require.resolve('@morpho-org/morpho-blue/package.json'));
}

/** Reads a source unit: `acg/X.sol` from ./contracts, `morpho-blue/...` from the npm package. */
function readUnit(unit: string): string {
  if (unit.startsWith('acg/')) return readFileSync(path.join(here, 'contracts', unit.slice(4)), 'utf8');
  if (unit.startsWith('morpho-blue/')) return readFileSync(path.join(morphoRoot(), unit.slice('morpho-blue/'.length)), 'utf8');
  throw new Error(`compileLendingContracts: unknown import ${unit}`);
}

/** The cache folder: `node_modules/.cache/acg-lending` at the repository root (found from this file). */
function cacheDir(): string {
  let dir = here;
  for (let i = 0; i < 8; i++) {
    if (existsSync(path.join(dir, 'node_modules'))) return path.join(dir, 'node_modules', '.cache', 'acg-lending');
    dir = path.dirname(dir);
  }
  return path.join(here, '.cache');
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
  const sources: Record<string, { content: string }> = {};
  const pending = Object.values(UNITS);
  // Gather the transitive imports ourselves, so the cache key covers every byte compiled.
  while (pending.length > 0) {
    const unit = pending.pop()!;
    if (sources[unit]) continue;
    const content = readUnit(unit);
    sources[unit] = { content };
    for (const m of content.matchAll(/import\s+(?:[^'"]*from\s+)?["']([^"']+)["']/g)) {
      const spec = m[1];
      const resolved = spec.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(unit), spec)) : spec;
      if (!sources[resolved]) pending.push(resolved);
    }
  }
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).sort(([a], [b]) => a.localeCompare(b))),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      viaIR: true,
      evmVersion: 'paris',
      outputSelection: Object.fromEntries(Object.values(UNITS).map((u) => [u, { '*': ['abi', 'evm.bytecode.object'] }])),
    },
  };
  const inputJson = JSON.stringify(input);
  const key = createHash('sha256').update(`${SOLC_VERSION}\n${inputJson}`).digest('hex');
  const dir = cacheDir();
  const file = path.join(dir, `${key}.json`);
  if (existsSync(file)) {
    memo = JSON.parse(readFileSync(file, 'utf8')) as Record<LendingContractName, CompiledContract>;
    return memo;
  }
  // solc-js is CommonJS and large (soljson.js): load it only when a compile is needed.
  const solc = loadSolc();
  if (!solc.version().startsWith(`${SOLC_VERSION}+`)) throw new Error(`compileLendingContracts: need solc ${SOLC_VERSION}, found ${solc.version()}`);
  const output = JSON.parse(solc.compile(inputJson)) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`compileLendingContracts: solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const result = {} as Record<LendingContractName, CompiledContract>;
  for (const [name, unit] of Object.entries(UNITS) as [LendingContractName, string][]) {
    const c = output.contracts[unit]?.[name];
    if (!c?.evm.bytecode.object) throw new Error(`compileLendingContracts: no bytecode for ${name}`);
    result[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  }
  mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(result));
  renameSync(tmp, file); // atomic: concurrent test files never read a half-written cache
  memo = result;
  return result;
}
