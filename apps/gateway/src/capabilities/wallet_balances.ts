import { WALLET_BALANCES_CHAINS, WalletBalancesInput, WalletBalancesOutput, type WalletBalancesChain } from '@acg/schemas';
import { erc20Abi, getAddress, multicall3Abi, type PublicClient } from 'viem';
import { CapabilityFailure, type CapabilityHandler } from './types.js';

const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11' as const;

/**
 * `intelligence.wallet_balances`: the native ETH and USDC balances of `address` on `chain`,
 * read in one Multicall3 `aggregate3` call at one block (viem `multicall`).
 *
 * Input: {@link WalletBalancesInput} `{address, chain = "base"}`.
 * Output: {@link WalletBalancesOutput}; balances are integer strings (wei; USDC base units, 6 decimals).
 * Fails with CapabilityFailure `chain_unavailable` (503) when the chain's RPC does not answer.
 */
export const walletBalances: CapabilityHandler<typeof WalletBalancesInput, typeof WalletBalancesOutput> = {
  id: 'intelligence.wallet_balances',
  input: WalletBalancesInput,
  output: WalletBalancesOutput,
  /** The chain must be configured before anyone pays for it. */
  precondition(input, deps) {
    return deps.chainClient(input.chain) ? undefined : `The chain "${input.chain}" is not configured on this gateway.`;
  },
  async run(input, deps) {
    const client = deps.chainClient(input.chain) as PublicClient;
    const chain = input.chain as WalletBalancesChain;
    const address = getAddress(input.address);
    const usdc = getAddress(WALLET_BALANCES_CHAINS[chain].usdc);
    try {
      const blockNumber = await client.getBlockNumber({ cacheTime: 0 });
      const [native, token] = await client.multicall({
        multicallAddress: MULTICALL3,
        blockNumber,
        allowFailure: false,
        contracts: [
          { address: MULTICALL3, abi: multicall3Abi, functionName: 'getEthBalance', args: [address] },
          { address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] },
        ],
      });
      return {
        address,
        chain,
        chain_id: WALLET_BALANCES_CHAINS[chain].chain_id,
        block_number: blockNumber.toString(),
        native: { symbol: 'ETH' as const, decimals: 18 as const, balance: (native as bigint).toString() },
        usdc: { address: usdc, decimals: 6 as const, balance: (token as bigint).toString() },
      };
    } catch (e) {
      throw new CapabilityFailure('chain_unavailable', `Could not read balances on ${chain}: the chain's RPC did not answer.`, 503, e);
    }
  },
};
