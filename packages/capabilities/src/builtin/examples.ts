import { WALLET_BALANCES_CHAINS, WALLET_BALANCES_ID } from '@acg/schemas';

/** A funded dev-chain buyer (anvil test mnemonic index 2), also a valid address on Base. */
export const EXAMPLE_ADDRESS = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

/** A working `POST /api/v1/execute` body: `intelligence.wallet_balances` of {@link EXAMPLE_ADDRESS} on Base. */
export const walletBalancesRequest = {
  capability_id: WALLET_BALANCES_ID,
  input: { address: EXAMPLE_ADDRESS, chain: 'base' },
};

/** The docs/spec-notes.md 2.7 answer to {@link walletBalancesRequest} (balances in wei and USDC base units). */
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
