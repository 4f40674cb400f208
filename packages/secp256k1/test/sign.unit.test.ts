import { authorizationTypes } from '@x402/evm';
import { hexToBytes, keccak256, recoverTypedDataAddress, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign, serializeSignature } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { nativeSecp256k1Available, recoverTypedDataSigner, signDigest, signTypedDataWith, type Secp256k1Backend } from '../src/index.js';

const backends: Secp256k1Backend[] = ['native', 'noble'];

const typedData = (from: Hex, i: number) =>
  ({
    domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      from,
      to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      value: 1000n + BigInt(i),
      validAfter: 0n,
      validBefore: 1_900_000_000n,
      nonce: keccak256(toHex(`nonce-${i}`)),
    },
  }) as const;

describe('secp256k1 signing', () => {
  it('loads the native binding on this platform (linux-x64)', () => {
    expect(nativeSecp256k1Available()).toBe(true);
  });

  it('signDigest gives viem’s signature bytes (RFC 6979, low-s, v 27/28) with both backends', async () => {
    for (let i = 0; i < 20; i++) {
      const key = generatePrivateKey();
      const hash = keccak256(toHex(`message ${i}`));
      const expected = serializeSignature(await sign({ hash, privateKey: key }));
      for (const b of backends) expect(toHex(signDigest(hexToBytes(hash), hexToBytes(key), b))).toBe(expected);
    }
  });

  it('EIP-712: signTypedDataWith equals a viem account’s signTypedData, and recoverTypedDataSigner finds the signer', async () => {
    for (let i = 0; i < 10; i++) {
      const key = generatePrivateKey();
      const account = privateKeyToAccount(key);
      const td = typedData(account.address, i);
      const expected = await account.signTypedData(td);
      for (const b of backends) {
        const signature = signTypedDataWith(key, td, b);
        expect(signature).toBe(expected);
        expect(recoverTypedDataSigner(td, signature, b)).toBe(account.address);
      }
      expect(await recoverTypedDataAddress({ ...td, signature: expected })).toBe(account.address);
      // another message does not recover to the signer
      expect(recoverTypedDataSigner(typedData(account.address, i + 100), expected)).not.toBe(account.address);
    }
  });

  it('refuses a key or hash of the wrong length', () => {
    expect(() => signDigest(new Uint8Array(31), new Uint8Array(32).fill(1))).toThrow(/32 bytes/);
    expect(() => signDigest(new Uint8Array(32), new Uint8Array(31).fill(1))).toThrow(/32 bytes/);
  });
});
