import { createPublicClient, http, type Address, type Hex } from 'viem';

/** A contract build as `src/artifacts.generated.ts` holds it: runtime code with zeroed immutables and their byte positions. */
export type RuntimeArtifact = {
  readonly deployedBytecode: Hex;
  readonly immutableReferences: Readonly<Record<string, readonly { readonly start: number; readonly length: number }[]>>;
};

/**
 * The runtime code a constructor would leave: `artifact.deployedBytecode` with each immutable (by solc AST
 * id) filled with its 32-byte value, what `anvil_setCode` then places at the canonical address.
 *
 * @param immutables - Per AST id, the 32-byte value (`0x` + 64 hex digits).
 * @throws {Error} If an immutable of the build has no value, or a value is not 32 bytes.
 */
export function fillImmutables(artifact: RuntimeArtifact, immutables: Record<string, Hex>): Hex {
  let hex = artifact.deployedBytecode.slice(2);
  for (const [id, refs] of Object.entries(artifact.immutableReferences)) {
    const value = immutables[id]?.slice(2).toLowerCase();
    if (value?.length !== 64) throw new Error(`fillImmutables: no 32-byte value for immutable ${id}`);
    for (const { start, length } of refs) hex = hex.slice(0, start * 2) + value.slice(64 - length * 2) + hex.slice((start + length) * 2);
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
