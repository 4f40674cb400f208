import { authorizationTypes } from '@x402/evm';
import { hashTypedData, keccak256, toHex, type TypedDataDefinition } from 'viem';
import { describe, expect, it } from 'vitest';
import { hashTypedDataFastHex, keccakReady } from '../src/index.js';

const usdc = { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' } as const;

// every shape the flat encoder handles, and some it hands to viem (nested structs, arrays, bytes)
const cases: Record<string, TypedDataDefinition> = {
  TransferWithAuthorization: {
    domain: usdc,
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      value: 1000n,
      validAfter: 0n,
      validBefore: 1_900_000_000n,
      nonce: keccak256(toHex('nonce')),
    },
  },
  'x402 Receipt (strings, uint256 as bigint and number)': {
    domain: { name: 'x402 receipt', version: '1', chainId: 1 },
    types: {
      Receipt: [
        { name: 'version', type: 'uint256' },
        { name: 'network', type: 'string' },
        { name: 'resourceUrl', type: 'string' },
        { name: 'payer', type: 'string' },
        { name: 'issuedAt', type: 'uint256' },
        { name: 'transaction', type: 'string' },
      ],
    },
    primaryType: 'Receipt',
    message: {
      version: 1n,
      network: 'eip155:8453',
      resourceUrl: 'https://gw.example/api/v1/execute?ü=✓',
      payer: '0xabc',
      issuedAt: 1_764_000_000,
      transaction: '',
    },
  },
  'small ints, negative ints, bool, bytes4, salt in the domain': {
    domain: { name: 'T', chainId: 1n, salt: keccak256(toHex('salt')) },
    types: {
      Mixed: [
        { name: 'a', type: 'uint8' },
        { name: 'b', type: 'int256' },
        { name: 'c', type: 'int8' },
        { name: 'd', type: 'bool' },
        { name: 'e', type: 'bool' },
        { name: 'f', type: 'bytes4' },
        { name: 'g', type: 'bytes32' },
      ],
    },
    primaryType: 'Mixed',
    message: { a: 255, b: -1n, c: -128, d: true, e: false, f: '0xdeadbeef', g: keccak256(toHex('g')) },
  },
  'only the domain': { domain: usdc, types: {}, primaryType: 'EIP712Domain', message: {} } as never,
  'nested struct and array (viem encodes it)': {
    domain: { name: 'Mail', version: '1', chainId: 1, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' },
    types: {
      Person: [
        { name: 'name', type: 'string' },
        { name: 'wallets', type: 'address[]' },
      ],
      Mail: [
        { name: 'from', type: 'Person' },
        { name: 'contents', type: 'string' },
        { name: 'data', type: 'bytes' },
      ],
    },
    primaryType: 'Mail',
    message: {
      from: { name: 'Cow', wallets: ['0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826'] },
      contents: 'Hello, Bob!',
      data: '0x0102',
    },
  },
};

describe('hashTypedDataFast', () => {
  it('gives viem’s hashTypedData digest, before and after the WebAssembly keccak is ready', async () => {
    for (const [name, td] of Object.entries(cases)) expect(hashTypedDataFastHex(td), name).toBe(hashTypedData(td));
    await keccakReady();
    for (const [name, td] of Object.entries(cases)) expect(hashTypedDataFastHex(td), name).toBe(hashTypedData(td));
  });

  it('refuses what viem refuses, with viem’s error', () => {
    const base = cases.TransferWithAuthorization as { message: Record<string, unknown> };
    const bad: TypedDataDefinition[] = [
      // a mixed-case address with a wrong checksum
      { ...cases.TransferWithAuthorization, message: { ...base.message, from: '0x3c44CdDdB6a900fa2b585dd299e03d12FA4293BC' } } as never,
      { ...cases.TransferWithAuthorization, message: { ...base.message, value: 1n << 256n } } as never,
      { ...cases.TransferWithAuthorization, message: { ...base.message, nonce: '0x1234' } } as never,
      { ...cases.TransferWithAuthorization, primaryType: 'Nope' } as never,
    ];
    for (const td of bad) {
      let viemError: unknown;
      try {
        hashTypedData(td);
      } catch (e) {
        viemError = e;
      }
      expect(viemError).toBeInstanceOf(Error);
      expect(() => hashTypedDataFastHex(td)).toThrow((viemError as Error).message);
    }
  });
});
