import { createPublicClient, http, type Address, type Hex } from 'viem';

/**
 * A contract build as `src/artifacts.generated.ts` holds it: runtime code with zeroed immutables, their byte
 * positions by solc AST id, and each immutable's AST id by its Solidity name.
 */
export type RuntimeArtifact = {
  readonly deployedBytecode: Hex;
  readonly immutableReferences: Readonly<Record<string, readonly { readonly start: number; readonly length: number }[]>>;
  readonly immutableIds: Readonly<Record<string, string>>;
};

/**
 * The runtime code a constructor would leave: `artifact.deployedBytecode` with each immutable filled with its
 * value, what `anvil_setCode` then places at the canonical address.
 *
 * @param immutables - Per Solidity name of an immutable (e.g. `PERMIT2`), its 32-byte value (`0x` + 64 hex digits).
 * @throws {Error} If an immutable of the build has no value, a value is not 32 bytes, or a name is not an immutable of the build.
 */
export function fillImmutables(artifact: RuntimeArtifact, immutables: Record<string, Hex>): Hex {
  for (const name of Object.keys(immutables)) {
    if (!(name in artifact.immutableIds)) throw new Error(`fillImmutables: ${name} is not an immutable of this build`);
  }
  let hex = artifact.deployedBytecode.slice(2);
  for (const [name, id] of Object.entries(artifact.immutableIds)) {
    const value = immutables[name]?.slice(2).toLowerCase();
    if (value?.length !== 64) throw new Error(`fillImmutables: no 32-byte value for immutable ${name}`);
    for (const { start, length } of artifact.immutableReferences[id] ?? []) {
      hex = hex.slice(0, start * 2) + value.slice(64 - length * 2) + hex.slice((start + length) * 2);
    }
  }
  return `0x${hex}`;
}

/**
 * Places `code` at `address` on an anvil node with `anvil_setCode`, unless it is already there.
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node.
 * @returns Whether the code was written (false when the address already held exactly `code`).
 * @throws {Error} If the address holds other code, or the code read back differs.
 */
export async function setRuntimeCode(rpcUrl: string, address: Address, code: Hex, label: string): Promise<boolean> {
  const client = createPublicClient({ transport: http(rpcUrl) });
  const existing = (await client.getCode({ address }))?.toLowerCase();
  if (existing === code.toLowerCase()) return false;
  if (existing && existing !== '0x') throw new Error(`${label}: ${address} already holds other code`);
  await client.request({ method: 'anvil_setCode' as never, params: [address, code] as never });
  if ((await client.getCode({ address }))?.toLowerCase() !== code.toLowerCase()) throw new Error(`${label}: code at ${address} differs after anvil_setCode`);
  return true;
}
