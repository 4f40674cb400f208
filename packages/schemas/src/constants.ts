/**
 * Contract addresses the gateway, its capabilities and the dev chain share. Each is the canonical
 * mainnet address; the dev chains place the same contracts at the same addresses (docs/decisions.md "The dev chain").
 */

/** Multicall3 (mds1/multicall), the same address on every EVM chain: `0xcA11bde05977b3631167028862bE2a173976CA11`. */
export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11' as const;

/** Circle USDC (FiatTokenV2_2) on Base, the asset x402 payments settle in (docs/spec-notes.md 2.9 `asset`). */
export const BASE_USDC_ADDRESS = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as const;
