import type { Address } from 'viem';

/** Canonical Multicall3 address (same on every chain). */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** Circle USDC (FiatTokenV2_2 proxy) on Base mainnet; the dev payment chain puts real FiatTokenV2_2 code here. */
export const BASE_USDC_ADDRESS: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

/** Base mainnet chain id; the dev payment chain uses it so CAIP-2 is `eip155:8453` as in production. */
export const BASE_CHAIN_ID = 8453;

/** USDC decimals: 1 USDC = 1_000_000 base units. */
export const USDC_DECIMALS = 6;

/** What `setupPaymentChain` mints to each buyer: 10,000 USDC in base units. */
export const BUYER_USDC_FUNDING = 10_000_000_000n;
