import { concat, createWalletClient, getContractAddress, hashDomain, http, parseEther, type Address, type Hash, type Hex } from 'viem';
import { devClients } from '../clients.js';
import { permit2Abi, permit2Bytecode, permit2DeployedBytecode, permit2ImmutableReferences } from './permit2Artifact.generated.js';

export { permit2Abi, permit2Bytecode, permit2DeployedBytecode, permit2ImmutableReferences };

/** Uniswap Permit2's canonical address, the same on every chain; `@x402/evm`'s `PERMIT2_ADDRESS`. */
export const PERMIT2_ADDRESS: Address = '0x000000000022D473030F116dDEE9F6B43aC78BA3';

/** The deterministic deployment proxy (CREATE2 factory) that anvil ships at genesis; Permit2 was deployed through it. */
export const DETERMINISTIC_DEPLOYER_ADDRESS: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C';

/** The CREATE2 salt of Permit2's canonical deployment: with the deployer above and Permit2's creation code it gives {@link PERMIT2_ADDRESS}. */
export const PERMIT2_SALT: Hex = '0x0000000000000000000000000000000000000000d3af2663da51c10215000000';

/**
 * The sender of the deployment transaction: an address no dev key controls, impersonated on anvil and given
 * gas money, so the deployment uses no dev account's nonce (a facilitator with viem's `nonceManager` starts
 * where the chain says). It is the address that published the deterministic deployer.
 */
const DEPLOY_SENDER: Address = '0x3fAB184622Dc19b6109349B94811493BF2a45362';

/**
 * Where the checked-in Permit2 build lands through CREATE2 (deployer, salt, creation code).
 *
 * @returns The address; equals {@link PERMIT2_ADDRESS} exactly when the build is byte for byte the canonical one.
 */
export function permit2Create2Address(): Address {
  return getContractAddress({ opcode: 'CREATE2', from: DETERMINISTIC_DEPLOYER_ADDRESS, salt: PERMIT2_SALT, bytecode: permit2Bytecode });
}

/**
 * Permit2's EIP-712 domain separator on a chain: `{ name: "Permit2", chainId, verifyingContract: PERMIT2_ADDRESS }`
 * (no version), the domain `@x402/evm` signs `PermitWitnessTransferFrom` with.
 *
 * @param chainId - The chain id, e.g. 8453.
 * @returns The 32-byte separator `DOMAIN_SEPARATOR()` must return.
 */
export function permit2DomainSeparator(chainId: number): Hash {
  return hashDomain({
    domain: { name: 'Permit2', chainId: BigInt(chainId), verifyingContract: PERMIT2_ADDRESS },
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
    },
  });
}

/**
 * Whether `code` is the build's runtime code with this chain's immutables: equal outside the immutable
 * ranges, and the ranges hold exactly `_CACHED_CHAIN_ID = chainId` and `_CACHED_DOMAIN_SEPARATOR =
 * permit2DomainSeparator(chainId)` (EIP712.sol), whichever solc AST id each has.
 */
export function isPermit2Runtime(code: Hex | undefined, chainId: number): boolean {
  const build = permit2DeployedBytecode.slice(2).toLowerCase();
  const hex = code?.slice(2).toLowerCase() ?? '';
  if (hex.length !== build.length) return false;
  const wanted = new Set([BigInt(chainId).toString(16).padStart(64, '0'), permit2DomainSeparator(chainId).slice(2).toLowerCase()]);
  const seen = new Set<string>();
  let masked = hex;
  for (const refs of Object.values(permit2ImmutableReferences)) {
    const values = new Set(refs.map(({ start, length }) => hex.slice(start * 2, (start + length) * 2)));
    if (values.size !== 1) return false;
    const [value] = values;
    if (!wanted.has(value)) return false;
    seen.add(value);
    for (const { start, length } of refs) masked = masked.slice(0, start * 2) + '00'.repeat(length) + masked.slice((start + length) * 2);
  }
  return seen.size === wanted.size && masked === build;
}

/**
 * Deploys Uniswap Permit2 at its canonical address {@link PERMIT2_ADDRESS} on an anvil node, the way it is
 * deployed on public chains: a transaction to the deterministic deployer (anvil has it at genesis) with
 * {@link PERMIT2_SALT} and Permit2's creation code (checked in, built from the npm sources: `src/permit2/README.md`).
 * Because the code really runs its constructor at that address, its immutables (`_CACHED_CHAIN_ID`,
 * `_CACHED_DOMAIN_SEPARATOR`) are right for this chain and address; nothing is patched. The sender is an
 * impersonated address funded with `anvil_setBalance`, so no dev account's nonce moves.
 *
 * Idempotent: if the address already holds the expected code, nothing is sent.
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node (any chain id).
 * @returns `{ address, transactionHash }` (`transactionHash` null when it was already there).
 * @throws {Error} If the node lacks the deterministic deployer (anvil `--disable-default-create2-deployer`), the
 *   deployment reverts, or the code placed differs from the build with this chain's immutables.
 */
export async function installPermit2(rpcUrl: string): Promise<{ address: Address; transactionHash: Hash | null }> {
  const { chain, publicClient, testClient } = await devClients(rpcUrl);
  const existing = await publicClient.getCode({ address: PERMIT2_ADDRESS });
  if (isPermit2Runtime(existing, chain.id)) return { address: PERMIT2_ADDRESS, transactionHash: null };
  if (existing && existing !== '0x') throw new Error(`installPermit2: ${PERMIT2_ADDRESS} already holds other code`);
  if (permit2Create2Address() !== PERMIT2_ADDRESS) throw new Error(`installPermit2: the build lands at ${permit2Create2Address()}, not ${PERMIT2_ADDRESS}`);
  const deployer = await publicClient.getCode({ address: DETERMINISTIC_DEPLOYER_ADDRESS });
  if (!deployer || deployer === '0x') {
    throw new Error(`installPermit2: no deterministic deployer at ${DETERMINISTIC_DEPLOYER_ADDRESS} (anvil started with --disable-default-create2-deployer?)`);
  }

  await testClient.setBalance({ address: DEPLOY_SENDER, value: parseEther('1') });
  await testClient.impersonateAccount({ address: DEPLOY_SENDER });
  let transactionHash: Hash;
  try {
    const wallet = createWalletClient({ account: DEPLOY_SENDER, chain, transport: http(rpcUrl) });
    transactionHash = await wallet.sendTransaction({ to: DETERMINISTIC_DEPLOYER_ADDRESS, data: concat([PERMIT2_SALT, permit2Bytecode]), gas: 5_000_000n });
  } finally {
    await testClient.stopImpersonatingAccount({ address: DEPLOY_SENDER });
  }
  const receipt = await publicClient.waitForTransactionReceipt({ hash: transactionHash });
  if (receipt.status !== 'success') throw new Error(`installPermit2: deployment ${transactionHash} reverted`);
  const placed = await publicClient.getCode({ address: PERMIT2_ADDRESS });
  if (!isPermit2Runtime(placed, chain.id))
    throw new Error(`installPermit2: code at ${PERMIT2_ADDRESS} differs from the build with chain ${chain.id}'s immutables`);
  return { address: PERMIT2_ADDRESS, transactionHash };
}
