import {
  MULTICALL3_ADDRESS,
  WALLET_BALANCES_CHAINS,
  WALLET_BALANCES_ID,
  WalletBalancesInput,
  WalletBalancesOutput,
  type WalletBalancesChain,
} from '@acg/schemas';
import { erc20Abi, getAddress, multicall3Abi, type PublicClient } from 'viem';
import type { z } from 'zod';
import { CapabilityFailure, defineCapability } from '../define.js';
import { walletBalancesRequest, walletBalancesResponse } from './examples.js';

/** `{address, chain = "base"}`: `address` is `0x` + 40 hex (any case), `chain` one of `base | ethereum | arbitrum`. */
export type WalletBalancesParameters = z.input<typeof WalletBalancesInput>;
/** `{address, chain, chain_id, block_number, native: {balance}, usdc: {address, balance}}`; balances are integer strings (wei; USDC base units, 6 decimals). */
export type WalletBalancesReturnType = z.infer<typeof WalletBalancesOutput>;
/** `chain_unavailable` (503, refunded) when the chain's RPC does not answer. */
export type WalletBalancesErrorType = CapabilityFailure;

/**
 * `intelligence.wallet_balances`, 0.001 USDC (1000 base units) per call: the native ETH and USDC
 * balances of `address` on `chain`, read in one Multicall3 `aggregate3` call at one block (viem
 * `multicall`). Precondition (before payment, 422): the chain is configured on this gateway.
 *
 * @example
 * // POST {base_url}/api/v1/execute
 * { "capability_id": "intelligence.wallet_balances", "input": { "address": "0x3C44…93BC", "chain": "base" } }
 * // → result { "chain_id": 8453, "block_number": "24190512", "native": { "balance": "10000000000000000000000" }, "usdc": { "balance": "10000000000" } }
 */
export const walletBalances = defineCapability({
  id: WALLET_BALANCES_ID,
  product: 'intelligence',
  name: 'Wallet balances',
  description: 'Reads the native ETH and USDC balances of an address on Base, Ethereum or Arbitrum at the latest block.',
  surface: 'REST',
  auth: 'x402',
  method: 'POST',
  endpoint: '{base_url}/api/v1/execute',
  docs: '{base_url}/openapi.json',
  built: true,
  x402: 'accepted',
  price: { base_units: 1_000n, unit: 'call' },
  input: WalletBalancesInput,
  output: WalletBalancesOutput,
  example: { request: walletBalancesRequest, response: walletBalancesResponse },
  related_capabilities: ['gateway.execute'],
  notes: 'Call POST /api/v1/execute with capability_id and input; input_schema describes input and output_schema describes result.',
  // reads balances only: may start while the payment settles
  readOnly: true,
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
        multicallAddress: MULTICALL3_ADDRESS,
        blockNumber,
        allowFailure: false,
        contracts: [
          { address: MULTICALL3_ADDRESS, abi: multicall3Abi, functionName: 'getEthBalance', args: [address] },
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
});
