import { hexToBytes, type Hex, type TypedData, type TypedDataDefinition } from 'viem';
import { hashTypedDataFast } from './eip712.js';
import { recoverAddressFromSignature, signDigest, type Secp256k1Backend } from './secp256k1.js';

/**
 * EIP-712 signing with {@link signDigest}: the digest of {@link hashTypedDataFast} (viem's `hashTypedData`,
 * hashed with WebAssembly keccak256), then the native binding
 * (@noble/curves where it does not load). The same 0x-prefixed 65-byte signature as a viem
 * account's `signTypedData` (`r || s || v`, v 27/28), about 20 times cheaper with the binding.
 * @throws {Error} for an invalid private key; viem's errors for malformed typed data.
 */
export function signTypedDataWith<const T extends TypedData | Record<string, unknown>, P extends keyof T | 'EIP712Domain'>(
  privateKey: Hex,
  typedData: TypedDataDefinition<T, P>,
  backend?: Secp256k1Backend,
): Hex {
  const digest = hashTypedDataFast(typedData);
  return `0x${Buffer.from(signDigest(digest, hexToBytes(privateKey), backend)).toString('hex')}`;
}

/**
 * The address that signed EIP-712 `typedData` with the 65-byte `signature` (EOA signatures only:
 * no ERC-1271/6492 contract wallets), like viem's `recoverTypedDataAddress`.
 * @throws {Error} when the signature is malformed or no key recovers from it.
 */
export function recoverTypedDataSigner<const T extends TypedData | Record<string, unknown>, P extends keyof T | 'EIP712Domain'>(
  typedData: TypedDataDefinition<T, P>,
  signature: Hex,
  backend?: Secp256k1Backend,
): `0x${string}` {
  return recoverAddressFromSignature(hashTypedDataFast(typedData), hexToBytes(signature), backend);
}
