import { describe, expect, it } from 'vitest';
import { toJsonSchema } from '@acg/schemas';
import Ajv2020 from 'ajv/dist/2020.js';
import { WALLET_BALANCES_CHAINS, WalletBalancesInput, WalletBalancesOutput } from '../src/index.js';

/** A strict Ajv for JSON Schema 2020-12 (the schemas here use no `format`). */
const strictAjv = () => new Ajv2020({ strict: true, allErrors: true });

const LOWER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const CHECKSUMMED = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

const output = {
  address: CHECKSUMMED,
  chain: 'base',
  chain_id: 8453,
  block_number: '12345',
  native: { symbol: 'ETH', decimals: 18, balance: '10000000000000000000000' },
  usdc: { address: WALLET_BALANCES_CHAINS.base.usdc, decimals: 6, balance: '10000000000' },
};

describe('intelligence.wallet_balances input', () => {
  it('accepts any-case addresses and defaults chain to base', () => {
    expect(WalletBalancesInput.parse({ address: LOWER })).toEqual({ address: LOWER, chain: 'base' });
    expect(WalletBalancesInput.parse({ address: CHECKSUMMED.toUpperCase().replace('0X', '0x'), chain: 'arbitrum' }).chain).toBe('arbitrum');
  });

  it('rejects short addresses, unknown chains and extra keys', () => {
    expect(WalletBalancesInput.safeParse({ address: '0x1234' }).success).toBe(false);
    expect(WalletBalancesInput.safeParse({ address: LOWER, chain: 'optimism' }).success).toBe(false);
    expect(WalletBalancesInput.safeParse({ address: LOWER, extra: 1 }).success).toBe(false);
  });

  it('input JSON Schema leaves chain optional and rejects what zod rejects', () => {
    const validate = strictAjv().compile(toJsonSchema(WalletBalancesInput, { io: 'input' }));
    expect(validate({ address: LOWER })).toBe(true);
    expect(validate({ address: LOWER, chain: 'ethereum' })).toBe(true);
    expect(validate({ address: LOWER, chain: 'optimism' })).toBe(false);
    expect(validate({ address: '0x1234' })).toBe(false);
    expect(validate({ address: LOWER, extra: 1 })).toBe(false);
  });
});

describe('intelligence.wallet_balances output', () => {
  it('accepts a checksummed result with integer-string balances', () => {
    expect(WalletBalancesOutput.safeParse(output).success).toBe(true);
    const validate = strictAjv().compile(toJsonSchema(WalletBalancesOutput));
    expect(validate(output), JSON.stringify(validate.errors)).toBe(true);
  });

  it('rejects a non-checksummed address, a numeric balance and wrong decimals', () => {
    expect(WalletBalancesOutput.safeParse({ ...output, address: LOWER }).success).toBe(false);
    expect(WalletBalancesOutput.safeParse({ ...output, native: { ...output.native, balance: 1 } }).success).toBe(false);
    expect(WalletBalancesOutput.safeParse({ ...output, usdc: { ...output.usdc, decimals: 18 } }).success).toBe(false);
  });

  it('knows the canonical USDC address and chain id of each chain', () => {
    expect(WALLET_BALANCES_CHAINS.base.chain_id).toBe(8453);
    for (const chain of Object.values(WALLET_BALANCES_CHAINS)) {
      expect(WalletBalancesOutput.shape.usdc.shape.address.safeParse(chain.usdc).success).toBe(true);
    }
  });
});
