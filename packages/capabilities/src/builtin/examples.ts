/** A funded dev-chain buyer (anvil test mnemonic index 2), also a valid address on Base: the address the built-ins' examples read. */
export const EXAMPLE_ADDRESS = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
