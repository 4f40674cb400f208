import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Abi, Hex } from 'viem';
import { compileCached, gatherSources, requireDevnetDep, resolveDevnetDep, type SolcJs } from '../solcCompile.js';

/** Where a solc immutable sits in the runtime code: byte offsets (without `0x`), 32 bytes each. */
export type ImmutableReferences = Record<string, { start: number; length: number }[]>;

/** Permit2 as solc builds it: ABI, creation code, runtime code with its immutables left as zeros, and their positions. */
export type Permit2Build = {
  abi: Abi;
  /** Creation code (`evm.bytecode.object`): what the deterministic deployer runs. */
  bytecode: Hex;
  /** Runtime code with the immutables (`_CACHED_CHAIN_ID`, `_CACHED_DOMAIN_SEPARATOR`) as zero bytes. */
  deployedBytecode: Hex;
  /** Positions of the immutables in {@link Permit2Build.deployedBytecode}, keyed by solc AST id. */
  immutableReferences: ImmutableReferences;
};

/** The compiler Permit2 pins (`pragma solidity 0.8.17`), the npm package `solc@0.8.17` installed as `solc-0.8.17`. */
export const PERMIT2_SOLC_VERSION = '0.8.17';

/** The npm package whose tarball carries Permit2's published sources (`lib/permit2`, with solmate under `lib/permit2/lib/solmate`). */
export const PERMIT2_SOURCE_PACKAGE = '@uniswap/v4-periphery';

/**
 * Permit2's own build settings (its `foundry.toml`: solc 0.8.17, optimizer 1,000,000 runs, `via_ir`,
 * `bytecode_hash = "none"`; EVM version: solc 0.8.17's default, `london`). With them the creation code is
 * byte for byte the one deployed at `0x000000000022D473030F116dDEE9F6B43aC78BA3` on public chains.
 */
export const PERMIT2_SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 1_000_000 },
  viaIR: true,
  metadata: { bytecodeHash: 'none' },
} as const;

function permit2Root(): string {
  return path.join(path.dirname(resolveDevnetDep(`${PERMIT2_SOURCE_PACKAGE}/package.json`)), 'lib', 'permit2');
}

/** Reads a source unit as Permit2's remapping names it: `src/...` from Permit2, `solmate/...` from its solmate copy. */
function readUnit(root: string, unit: string): string {
  if (unit.startsWith('src/')) return readFileSync(path.join(root, unit), 'utf8');
  if (unit.startsWith('solmate/')) return readFileSync(path.join(root, 'lib', 'solmate', unit.slice('solmate/'.length)), 'utf8');
  throw new Error(`compilePermit2: unknown import ${unit}`);
}

let memo: Permit2Build | undefined;

/**
 * Compiles Uniswap's Permit2 (`src/Permit2.sol` and its imports, as published in the npm package
 * {@link PERMIT2_SOURCE_PACKAGE} 1.0.3 under `lib/permit2`) with solc-js {@link PERMIT2_SOLC_VERSION} and
 * {@link PERMIT2_SOLC_SETTINGS}. The dev chains do not call this: they use the checked-in build
 * (`artifact.ts`, written by `scripts/build-permit2.ts`), and a test compiles again and compares.
 *
 * The output is cached under `node_modules/.cache/acg-permit2/<sha256 of version and input>.json` (and in
 * memory): the first compile takes about 40 s with solc-js, later calls milliseconds.
 *
 * @returns {@link Permit2Build}.
 * @throws {Error} If solc reports an error, the wrong solc version is installed, or the sources are missing.
 */
export function compilePermit2(): Permit2Build {
  if (memo) return memo;
  const root = permit2Root();
  const input = {
    language: 'Solidity',
    sources: gatherSources(['src/Permit2.sol'], (unit) => readUnit(root, unit)),
    settings: {
      ...PERMIT2_SOLC_SETTINGS,
      outputSelection: {
        'src/Permit2.sol': { Permit2: ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] },
      },
    },
  };
  memo = compileCached<
    Permit2Build,
    { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string; immutableReferences: ImmutableReferences } } }
  >({
    label: 'compilePermit2',
    version: PERMIT2_SOLC_VERSION,
    cacheName: 'acg-permit2',
    input,
    loadSolc: () => requireDevnetDep<SolcJs>('solc-0.8.17'),
    extract: (output) => {
      const c = output.contracts?.['src/Permit2.sol']?.Permit2;
      if (!c) throw new Error('compilePermit2: solc produced no Permit2');
      return {
        abi: c.abi,
        bytecode: `0x${c.evm.bytecode.object}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
        immutableReferences: c.evm.deployedBytecode.immutableReferences,
      };
    },
  });
  return memo;
}
