// Shared by this package's integration tests: a payment dev chain (anvil + @acg/devnet's setupPaymentChain,
// which places our contracts), clients, a call helper that reports the decoded revert error, and snapshots.
import {
  DEV_POLLING_INTERVAL_MS,
  setupPaymentChain,
  startAnvil,
  USDC_EIP712_NAME,
  USDC_EIP712_VERSION,
  usdcAbi,
  type AnvilInstance,
  type PaymentChainInfo,
} from '@acg/devnet';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  maxUint256,
  parseSignature,
  type Abi,
  type Address,
  type LocalAccount,
} from 'viem';
import { afterAll, beforeAll } from 'vitest';
import { PERMIT2_ADDRESS } from '../src/index.js';

/** Starts a chain-8453 anvil with the payment chain set up before the file's tests, and stops it after; read `.pay` inside tests. */
export function usePaymentChain(): { readonly pay: PaymentChainInfo } {
  let anvil: AnvilInstance | undefined;
  const box = { pay: undefined as unknown as PaymentChainInfo };
  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 8453 });
    box.pay = await setupPaymentChain(anvil.rpcUrl);
  });
  afterAll(async () => {
    await anvil?.stop();
  });
  return box;
}

export const publicClientOf = (pay: PaymentChainInfo) =>
  createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl), pollingInterval: DEV_POLLING_INTERVAL_MS });
export const testClientOf = (pay: PaymentChainInfo) => createTestClient({ mode: 'anvil', chain: pay.chain, transport: http(pay.rpcUrl) });
export const walletOf = (pay: PaymentChainInfo, account: LocalAccount) => createWalletClient({ account, chain: pay.chain, transport: http(pay.rpcUrl) });
/** USDC's EIP-712 domain on the dev chain (for EIP-2612 permits and EIP-3009 authorizations). */
export const usdcDomain = (pay: PaymentChainInfo) => ({
  name: USDC_EIP712_NAME,
  version: USDC_EIP712_VERSION,
  chainId: pay.chainId,
  verifyingContract: pay.usdc,
});
/**
 * The buyer's EIP-2612 permit giving Permit2 (the spender) an allowance of `value` USDC base units
 * until `deadline` (unix seconds), signed with the buyer's current USDC permit nonce: `{value,
 * deadline, r, s, v}`, the shape the proxies' `settleWithPermit` and the deposit collector's
 * EIP-2612 extension take.
 */
export async function signPermitToPermit2(pay: PaymentChainInfo, buyer: LocalAccount, value: bigint, deadline: bigint) {
  const nonce = await publicClientOf(pay).readContract({ address: pay.usdc, abi: usdcAbi, functionName: 'nonces', args: [buyer.address] });
  const sig = parseSignature(
    await buyer.signTypedData({
      domain: usdcDomain(pay),
      types: {
        Permit: [
          { name: 'owner', type: 'address' },
          { name: 'spender', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'nonce', type: 'uint256' },
          { name: 'deadline', type: 'uint256' },
        ],
      },
      primaryType: 'Permit',
      message: { owner: buyer.address, spender: PERMIT2_ADDRESS, value, nonce, deadline },
    }),
  );
  return { value, deadline, r: sig.r, s: sig.s, v: Number(sig.v) };
}
export const chainNow = async (pay: PaymentChainInfo) => (await publicClientOf(pay).getBlock()).timestamp;

/**
 * Calls `functionName` on `address` as `caller` (simulated first, then sent and mined).
 *
 * @returns `'success'`, or the decoded custom error's name when it reverts (the error must be in `abi`), or
 *   `Error: <reason>` for a plain `require` message (e.g. from USDC).
 * @throws What viem throws for anything else (an undecodable revert, a node error).
 */
export async function call(
  pay: PaymentChainInfo,
  caller: LocalAccount,
  address: Address,
  abi: Abi,
  functionName: string,
  args: readonly unknown[],
): Promise<string> {
  const client = publicClientOf(pay);
  try {
    const { request } = await client.simulateContract({ account: caller, address, abi, functionName, args });
    const hash = await walletOf(pay, caller).writeContract(request);
    return (await client.waitForTransactionReceipt({ hash })).status;
  } catch (err) {
    const reverted = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
    if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
      return reverted.data.errorName === 'Error' ? `Error: ${String(reverted.data.args?.[0])}` : reverted.data.errorName;
    }
    throw err;
  }
}

/** Runs `body` on a snapshot of the chain and reverts to it afterwards (for tests that move the chain's clock). */
export async function onSnapshot(pay: PaymentChainInfo, body: () => Promise<void>): Promise<void> {
  const id = await testClientOf(pay).snapshot();
  try {
    await body();
  } finally {
    await testClientOf(pay).revert({ id });
  }
}

/** Mines one block at `timestamp` (unix seconds). */
export async function warpTo(pay: PaymentChainInfo, timestamp: bigint): Promise<void> {
  await testClientOf(pay).setNextBlockTimestamp({ timestamp });
  await testClientOf(pay).mine({ blocks: 1 });
}

/** The buyer's one-time ERC-20 approval of Permit2. */
export async function approvePermit2(pay: PaymentChainInfo, buyer: LocalAccount): Promise<void> {
  const hash = await walletOf(pay, buyer).writeContract({ address: pay.usdc, abi: usdcAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] });
  await publicClientOf(pay).waitForTransactionReceipt({ hash });
}
