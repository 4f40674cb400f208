/**
 * @acg/secp256k1: the hot-path cryptography shared by bundle intake (@acg/bundles), the x402
 * paywall (@acg/payments) and receipt signing (@acg/receipts): secp256k1 recovery and signing
 * through the native libsecp256k1 binding (pure-JS @noble/curves where it does not load), EIP-712
 * on top of them, and WebAssembly keccak256.
 */
export { hashTypedDataFast, hashTypedDataFastHex } from './eip712.js';
export { keccak256Bytes, keccak256Hex, keccakReady } from './keccak.js';
export {
  nativeSecp256k1Available,
  recoverAddress,
  recoverAddressFromSignature,
  recoverPublicKey,
  secp256k1Backend,
  signDigest,
  useSecp256k1Backend,
  type Secp256k1Backend,
} from './secp256k1.js';
export { recoverTypedDataSigner, signTypedDataWith } from './typedData.js';
