import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileCached, gatherSources, type SolcJs } from '@acg/devnet/solcCompile';
import type { Abi, Hex } from 'viem';

/**
 * Compiles this package's Solidity (`contracts/`) with solc-js: used by `scripts/build-contracts.ts`, which
 * writes `src/artifacts.generated.ts`, and by `test/artifacts.unit.test.ts`, which compiles again and
 * compares. The dev chains never compile.
 */

const require = createRequire(import.meta.url);
const CONTRACTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'contracts');

/** The compiler (npm `solc`, pinned exactly in package.json): ≥ 0.8.24 for transient storage (`ReentrancyGuardTransient`). */
export const X402_CONTRACTS_SOLC_VERSION = '0.8.28';

/** Build settings: optimizer 10,000 runs, EVM `cancun` (transient storage; Base runs it), no metadata hash (the bytes depend on the source only). */
export const X402_CONTRACTS_SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 10_000 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none' },
} as const;

/** The contracts built, by source unit and contract name. */
export const X402_CONTRACTS = [
  { unit: 'contracts/x402UptoPermit2Proxy.sol', name: 'x402UptoPermit2Proxy' },
  { unit: 'contracts/x402BatchSettlement.sol', name: 'x402BatchSettlement' },
  { unit: 'contracts/ERC3009DepositCollector.sol', name: 'ERC3009DepositCollector' },
  { unit: 'contracts/x402ExactPermit2Proxy.sol', name: 'x402ExactPermit2Proxy' },
  { unit: 'contracts/Permit2DepositCollector.sol', name: 'Permit2DepositCollector' },
] as const;

/** Where a solc immutable sits in the runtime code: byte offsets (without `0x`), 32 bytes each, keyed by AST id. */
export type ImmutableReferences = Record<string, { start: number; length: number }[]>;

/**
 * One contract as solc builds it: ABI, runtime code with immutables as zeros, their positions, and each
 * immutable's AST id by its Solidity name (so placement fills them by name).
 */
export type ContractBuild = { abi: Abi; deployedBytecode: Hex; immutableReferences: ImmutableReferences; immutableIds: Record<string, string> };

/** `@openzeppelin/contracts/...` from the installed npm package, `contracts/...` and `test/fixtures/...` from this package. */
function readUnit(unit: string): string {
  if (unit.startsWith('@openzeppelin/contracts/')) return readFileSync(require.resolve(unit), 'utf8');
  if (unit.startsWith('contracts/')) return readFileSync(path.join(CONTRACTS_DIR, unit.slice('contracts/'.length)), 'utf8');
  if (unit.startsWith('test/fixtures/')) return readFileSync(path.join(CONTRACTS_DIR, '..', unit), 'utf8');
  throw new Error(`compileX402Contracts: unknown import ${unit}`);
}

type SolcContract = { abi: Abi; evm: { deployedBytecode: { object: string; immutableReferences?: ImmutableReferences } } };
type AstNode = { id?: number; nodeType?: string; name?: string; mutability?: string; nodes?: AstNode[] };

/** Per Solidity name, the AST id of each immutable state variable declared in the source unit's `ast`. */
function immutableIdsOf(ast: AstNode | undefined, ids: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (n: AstNode) => {
    if (n.nodeType === 'VariableDeclaration' && n.mutability === 'immutable' && n.name && ids.includes(String(n.id))) out[n.name] = String(n.id);
    for (const c of n.nodes ?? []) walk(c);
  };
  if (ast) walk(ast);
  if (Object.keys(out).length !== ids.length) throw new Error(`compileX402Contracts: immutables ${ids.join(',')} not all named in the AST`);
  return out;
}

/**
 * Compiles {@link X402_CONTRACTS} with solc {@link X402_CONTRACTS_SOLC_VERSION} and
 * {@link X402_CONTRACTS_SOLC_SETTINGS}; cached under `node_modules/.cache/acg-x402-contracts`.
 *
 * @returns Per contract name, its {@link ContractBuild}.
 * @throws {Error} If solc reports an error or another solc version is installed.
 */
export function compileX402Contracts(): Record<string, ContractBuild> {
  const units = X402_CONTRACTS.map((c) => c.unit);
  const input = {
    language: 'Solidity',
    sources: gatherSources(units, readUnit),
    settings: {
      ...X402_CONTRACTS_SOLC_SETTINGS,
      outputSelection: Object.fromEntries(
        X402_CONTRACTS.map((c) => [c.unit, { '': ['ast'], [c.name]: ['abi', 'evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] }]),
      ),
    },
  };
  return compileCached<Record<string, ContractBuild>, SolcContract>({
    label: 'compileX402Contracts',
    version: X402_CONTRACTS_SOLC_VERSION,
    cacheName: 'acg-x402-contracts',
    input,
    loadSolc: () => require('solc') as SolcJs,
    extract: (output) =>
      Object.fromEntries(
        X402_CONTRACTS.map(({ unit, name }) => {
          const c = output.contracts?.[unit]?.[name];
          if (!c) throw new Error(`compileX402Contracts: solc produced no ${name}`);
          const immutableReferences = c.evm.deployedBytecode.immutableReferences ?? {};
          return [
            name,
            {
              abi: c.abi,
              deployedBytecode: `0x${c.evm.deployedBytecode.object}` as Hex,
              immutableReferences,
              immutableIds: immutableIdsOf((output as { sources?: Record<string, { ast?: AstNode }> }).sources?.[unit]?.ast, Object.keys(immutableReferences)),
            },
          ];
        }),
      ),
  });
}

/** The text of `src/artifacts.generated.ts` for `builds`: one `<name>Artifact` constant per contract, typed `as const`. */
export function artifactsSource(builds: Record<string, ContractBuild>): string {
  const parts = [
    '// Generated by packages/x402-contracts/scripts/build-contracts.ts from contracts/*.sol. Do not edit.',
    `// Compiler: solc ${X402_CONTRACTS_SOLC_VERSION} (npm solc@${X402_CONTRACTS_SOLC_VERSION}), settings ${JSON.stringify(X402_CONTRACTS_SOLC_SETTINGS)}.`,
  ];
  for (const [name, b] of Object.entries(builds)) {
    parts.push(
      '',
      `/** ${name}: ABI, runtime code with its immutables as zero bytes, their positions (solc \`immutableReferences\`) and AST ids by name. */`,
      `export const ${name}Artifact = {`,
      `  abi: ${JSON.stringify(b.abi)},`,
      `  deployedBytecode: '${b.deployedBytecode}',`,
      `  immutableReferences: ${JSON.stringify(b.immutableReferences)},`,
      `  immutableIds: ${JSON.stringify(b.immutableIds)},`,
      '} as const;',
    );
  }
  return `${parts.join('\n')}\n`;
}

/**
 * Compiles one test-only contract (`test/fixtures/<name>.sol`, e.g. an attacker) with the same compiler and
 * settings, for tests that deploy it; never part of the checked-in build.
 *
 * @returns Its ABI and creation code.
 */
export function compileTestFixture(name: string): { abi: Abi; bytecode: Hex } {
  const unit = `test/fixtures/${name}.sol`;
  return compileCached<{ abi: Abi; bytecode: Hex }, { abi: Abi; evm: { bytecode: { object: string } } }>({
    label: `compileTestFixture(${name})`,
    version: X402_CONTRACTS_SOLC_VERSION,
    cacheName: 'acg-x402-contracts',
    input: {
      language: 'Solidity',
      sources: gatherSources([unit], readUnit),
      settings: { ...X402_CONTRACTS_SOLC_SETTINGS, outputSelection: { [unit]: { [name]: ['abi', 'evm.bytecode.object'] } } },
    },
    loadSolc: () => require('solc') as SolcJs,
    extract: (output) => {
      const c = output.contracts?.[unit]?.[name];
      if (!c) throw new Error(`compileTestFixture: solc produced no ${name}`);
      return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` as Hex };
    },
  });
}
