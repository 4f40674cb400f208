import { createRequire } from 'node:module';
import { secp256k1 as nobleSecp256k1 } from '@noble/curves/secp256k1.js';
import { checksumAddress, type Address } from 'viem';
import { keccak256Bytes } from './keccak.js';

/**
 * secp256k1 public-key recovery and signing for the hot paths (bundle intake, x402 payment
 * checks, receipt signing): the native libsecp256k1 binding of the
 * `secp256k1` package (v5, prebuilt binaries for linux-x64 glibc/musl, darwin-arm64 and
 * win32-x64, loaded by node-gyp-build without any install script), and `@noble/curves` (pure JS,
 * the library viem uses) where the binding does not load. Both give the same answers; the native
 * one is about 25 times faster (bench/README.md "Bundle intake").
 */
export type Secp256k1Backend = 'native' | 'noble';

/** The subset of the `secp256k1` package's API used here. */
interface NativeSecp256k1 {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
  ecdsaSign(msg32: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
}

function loadNative(): NativeSecp256k1 | undefined {
  try {
    // `secp256k1/bindings` is the native addon alone (the package's main entry would fall back to elliptic.js)
    const mod = createRequire(import.meta.url)('secp256k1/bindings') as NativeSecp256k1;
    return typeof mod.ecdsaRecover === 'function' && typeof mod.ecdsaSign === 'function' ? mod : undefined;
  } catch {
    return undefined;
  }
}

const native = loadNative();
let active: Secp256k1Backend = native ? 'native' : 'noble';

/** Which implementation recovers keys now (`native` unless the binding failed to load or {@link useSecp256k1Backend} chose `noble`). */
export function secp256k1Backend(): Secp256k1Backend {
  return active;
}

/** Whether the native binding loaded on this platform. */
export function nativeSecp256k1Available(): boolean {
  return native !== undefined;
}

/**
 * Chooses the implementation (tests and the bench compare the two).
 * @throws {Error} when `native` is asked for and the binding did not load.
 */
export function useSecp256k1Backend(backend: Secp256k1Backend): void {
  if (backend === 'native' && !native) throw new Error('the native secp256k1 binding did not load on this platform');
  active = backend;
}

const N = nobleSecp256k1.Point.CURVE().n;

/** A 32-byte big-endian scalar, or undefined when it is 0 or not below the curve order. */
function scalar(v: bigint): Uint8Array | undefined {
  if (v <= 0n || v >= N) return undefined;
  return Buffer.from(v.toString(16).padStart(64, '0'), 'hex');
}

/**
 * Recovers the uncompressed public key (65 bytes, `04 || x || y`) that signed `hash` with (r, s,
 * recovery bit). r and s must be in [1, n-1] (no low-s rule: viem's recovery has none either).
 * @throws {Error} when the signature is out of range or no key recovers from it.
 */
export function recoverPublicKey(hash: Uint8Array, r: bigint, s: bigint, recoveryBit: number, backend: Secp256k1Backend = active): Uint8Array {
  const rb = scalar(r);
  const sb = scalar(s);
  if (!rb || !sb || (recoveryBit !== 0 && recoveryBit !== 1) || hash.length !== 32) throw new Error('invalid signature');
  if (backend === 'native' && native) {
    const sig = new Uint8Array(64);
    sig.set(rb, 0);
    sig.set(sb, 32);
    return native.ecdsaRecover(sig, recoveryBit, hash, false);
  }
  return new nobleSecp256k1.Signature(r, s, recoveryBit).recoverPublicKey(hash).toBytes(false);
}

/**
 * The checksummed address that signed `hash` (keccak256 of the public key, last 20 bytes), as viem's
 * `recoverAddress` computes it.
 * @throws {Error} when the signature is out of range or no key recovers from it.
 */
export function recoverAddress(hash: Uint8Array, r: bigint, s: bigint, recoveryBit: number, backend: Secp256k1Backend = active): Address {
  const pub = recoverPublicKey(hash, r, s, recoveryBit, backend);
  const h = keccak256Bytes(pub.subarray(1));
  return checksumAddress(`0x${Buffer.from(h.subarray(12)).toString('hex')}`);
}

/**
 * Recovers the signer of a 65-byte `r || s || v` signature (v 27/28 or 0/1, as viem accepts).
 * @throws {Error} when the signature is malformed or no key recovers from it.
 */
export function recoverAddressFromSignature(hash: Uint8Array, signature: Uint8Array, backend: Secp256k1Backend = active): Address {
  if (signature.length !== 65) throw new Error('invalid signature length');
  const v = signature[64];
  const bit = v === 0 || v === 1 ? v : v === 27 ? 0 : v === 28 ? 1 : -1;
  if (bit < 0) throw new Error('invalid v');
  const r = BigInt(`0x${Buffer.from(signature.subarray(0, 32)).toString('hex')}`);
  const s = BigInt(`0x${Buffer.from(signature.subarray(32, 64)).toString('hex')}`);
  return recoverAddress(hash, r, s, bit, backend);
}

/**
 * Signs the 32-byte `hash` with `privateKey` (32 bytes): RFC 6979 deterministic nonce and low-s, as
 * libsecp256k1 and @noble/curves (viem's `sign`) both do, so both backends and viem give the same
 * bytes. Returns 65 bytes `r || s || v` with v = 27 + recovery bit (viem's serialized signature).
 * @throws {Error} when the key is not a valid secp256k1 private key or the hash is not 32 bytes.
 */
export function signDigest(hash: Uint8Array, privateKey: Uint8Array, backend: Secp256k1Backend = active): Uint8Array {
  if (hash.length !== 32 || privateKey.length !== 32) throw new Error('hash and private key must be 32 bytes');
  const out = new Uint8Array(65);
  if (backend === 'native' && native) {
    const { signature, recid } = native.ecdsaSign(hash, privateKey);
    out.set(signature, 0);
    out[64] = 27 + recid;
    return out;
  }
  // noble's 'recovered' format is the recovery bit, then r || s
  const rec = nobleSecp256k1.sign(hash, privateKey, { prehash: false, format: 'recovered' });
  out.set(rec.subarray(1, 65), 0);
  out[64] = 27 + rec[0];
  return out;
}
