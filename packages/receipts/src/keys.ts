import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { signTypedDataWith } from '@acg/secp256k1';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { hexToBytes, keccak256, stringToHex, type Hex } from 'viem';

/** PKCS#8 DER prefix of an Ed25519 private key (RFC 8410): the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A public JWK as published in `/.well-known/jwks.json`: `kid`, `use: "sig"` and `alg` on each (docs/decisions.md "Proofs and receipts"). */
export type PublishedJwk = JWK & { kid: string; use: 'sig'; alg: string };

/** The Ed25519 key that signs JWS proofs (`alg` EdDSA). */
export interface JwsKey {
  privateKey: KeyObject;
  publicJwk: PublishedJwk;
  kid: string;
}

/** The secp256k1 key that signs x402 EIP-712 offers and receipts; published as an EC `secp256k1` JWK (`alg` ES256K) so a verifier can derive its address. */
export interface SigningKey {
  account: PrivateKeyAccount;
  publicJwk: PublishedJwk;
  kid: string;
}

/** Thrown for a malformed receipt key; names the variable. */
export class ReceiptKeyError extends Error {
  override name = 'ReceiptKeyError';
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/**
 * The JWS key from `RECEIPT_JWS_KEY`: the 32-byte Ed25519 seed as 0x-prefixed hex (64 hex
 * characters). `kid` is the RFC 7638 thumbprint of the public JWK. Throws {@link ReceiptKeyError}.
 */
export async function jwsKeyFromHex(seedHex: string, variable = 'RECEIPT_JWS_KEY'): Promise<JwsKey> {
  if (!/^0x[0-9a-fA-F]{64}$/.test(seedHex)) throw new ReceiptKeyError(`${variable} must be 0x followed by 64 hex characters (an Ed25519 seed)`);
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.from(seedHex.slice(2), 'hex')]), format: 'der', type: 'pkcs8' });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk.x! });
  return { privateKey, kid, publicJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x!, kid, use: 'sig', alg: 'EdDSA' } };
}

/**
 * The offer/receipt signing key from `RECEIPT_SIGNING_KEY`: a secp256k1 private key as 0x-prefixed
 * hex. Its public JWK carries `x` and `y` of the uncompressed point. Throws {@link ReceiptKeyError}.
 */
export async function signingKeyFromHex(keyHex: string, variable = 'RECEIPT_SIGNING_KEY'): Promise<SigningKey> {
  if (!/^0x[0-9a-fA-F]{64}$/.test(keyHex)) throw new ReceiptKeyError(`${variable} must be 0x followed by 64 hex characters (a secp256k1 private key)`);
  let account: PrivateKeyAccount;
  try {
    const viemAccount = privateKeyToAccount(keyHex as Hex);
    // EIP-712 offers and receipts (one per paid answer) through the native binding: the same
    // signature as viem's, about 20 times cheaper (@acg/secp256k1)
    account = { ...viemAccount, signTypedData: async (typedData) => signTypedDataWith(keyHex as Hex, typedData as never) };
  } catch {
    throw new ReceiptKeyError(`${variable} is not a valid secp256k1 private key`);
  }
  const point = hexToBytes(account.publicKey); // 0x04 || X (32) || Y (32)
  const base = { kty: 'EC', crv: 'secp256k1', x: b64url(point.slice(1, 33)), y: b64url(point.slice(33, 65)) };
  const kid = await calculateJwkThumbprint(base);
  return { account, kid, publicJwk: { ...base, kid, use: 'sig', alg: 'ES256K' } };
}

/**
 * Deterministic development receipt keys (`npm start`, tests): derived from fixed labels, so they
 * are stable across restarts and never equal the dev treasury's or facilitator's keys.
 */
export function devReceiptKeys(): { jwsKey: Hex; signingKey: Hex } {
  return {
    jwsKey: keccak256(stringToHex('acg development receipt JWS key (Ed25519 seed)')),
    signingKey: keccak256(stringToHex('acg development receipt signing key (secp256k1)')),
  };
}
