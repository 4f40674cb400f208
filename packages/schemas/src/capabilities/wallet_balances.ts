import { z } from 'zod';
import { BASE_USDC_ADDRESS } from '../constants.js';
import { Address, ChecksumAddress, UintString } from '../primitives.js';

/** Capability id of the wallet-balances capability (executed through `POST /api/v1/execute`). */
export const WALLET_BALANCES_ID = 'intelligence.wallet_balances' as const;

/** Chains `intelligence.wallet_balances` reads: `base` (default), `ethereum`, `arbitrum`. */
export const WalletBalancesChain = z.enum(['base', 'ethereum', 'arbitrum']);
export type WalletBalancesChain = z.infer<typeof WalletBalancesChain>;

/**
 * Chain id and canonical Circle USDC contract of each chain the capability reads (the dev chains
 * use the same chain ids and place USDC at the same address, docs/decisions.md "The dev chain").
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
