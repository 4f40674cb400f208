import { Address, BASE_USDC_ADDRESS, ChecksumAddress, MULTICALL3_ADDRESS, UintString } from '@acg/schemas';
import { erc20Abi, getAddress, multicall3Abi, type PublicClient } from 'viem';
import { z } from 'zod';
import { CapabilityFailure, defineCapability, PAID_THROUGH_EXECUTE } from '../define.js';
import { EXAMPLE_ADDRESS } from './examples.js';

// `intelligence.wallet_balances`, whole in this file: id, chains, input and output schemas, example, run.

/** Capability id of the wallet-balances capability (executed through `POST /api/v1/execute`). */
export const WALLET_BALANCES_ID = 'intelligence.wallet_balances' as const;

/** Chains `intelligence.wallet_balances` reads: `base` (default), `ethereum`, `arbitrum`. */
export const WalletBalancesChain = z.enum(['base', 'ethereum', 'arbitrum']);
export type WalletBalancesChain = z.infer<typeof WalletBalancesChain>;

/**
 * Chain id and canonical Circle USDC contract of each chain the capability reads (the dev chains
 * use the same chain ids and place USDC at the same address; packages/devnet README).
 */
export const WALLET_BALANCES_CHAINS = {
  base: { chain_id: 8453, usdc: BASE_USDC_ADDRESS },
  ethereum: { chain_id: 1, usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' },
  arbitrum: { chain_id: 42161, usdc: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831' },
} as const satisfies Record<WalletBalancesChain, { chain_id: number; usdc: string }>;

/**
 * Input of `intelligence.wallet_balances`: `address` (`0x` + 40 hex, any case) and `chain`
 * (`base | ethereum | arbitrum`, default `base`). Its JSON Schema (io: input) leaves `chain` optional.
 */
export const WalletBalancesInput = z.strictObject({
  address: Address,
  chain: WalletBalancesChain.default('base'),
});
export type WalletBalancesInput = z.infer<typeof WalletBalancesInput>;

/**
 * Output of `intelligence.wallet_balances`, read at one block:
 * `address` (EIP-55 checksummed), `chain`, `chain_id` (integer), `block_number` (integer string),
 * `native` `{symbol: "ETH", decimals: 18, balance}` (wei, integer string) and
 * `usdc` `{address, decimals: 6, balance}` (USDC base units, integer string).
 */
export const WalletBalancesOutput = z.object({
  address: ChecksumAddress,
  chain: WalletBalancesChain,
  chain_id: z.int().positive(),
  block_number: UintString,
  native: z.object({
    symbol: z.literal('ETH'),
    decimals: z.literal(18),
    balance: UintString,
  }),
  usdc: z.object({
    address: ChecksumAddress,
    decimals: z.literal(6),
    balance: UintString,
  }),
});
export type WalletBalancesOutput = z.infer<typeof WalletBalancesOutput>;

/** A working `POST /api/v1/execute` body: `intelligence.wallet_balances` of {@link EXAMPLE_ADDRESS} on Base. */
export const walletBalancesRequest = {
  capability_id: WALLET_BALANCES_ID,
  input: { address: EXAMPLE_ADDRESS, chain: 'base' },
};

/** The execution answer to {@link walletBalancesRequest} (balances in wei and USDC base units). */
export const walletBalancesResponse = {
  execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
  status: 'SUCCEEDED',
  result: {
    address: EXAMPLE_ADDRESS,
    chain: 'base',
    chain_id: WALLET_BALANCES_CHAINS.base.chain_id,
    block_number: '24190512',
    native: { symbol: 'ETH', decimals: 18, balance: '10000000000000000000000' },
    usdc: { address: WALLET_BALANCES_CHAINS.base.usdc, decimals: 6, balance: '10000000000' },
  },
  payment: {
    tx_hash: '0x5f2c1e8d3b4a69707182930a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e',
    amount: '1000',
  },
};

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
  ...PAID_THROUGH_EXECUTE,
  docs: '{base_url}/openapi.json',
  built: true,
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
