import { getAddress, isAddress, type Address, type Hex } from 'viem';
import { invalidRequest } from '@acg/bundles';
import { keccak256Bytes, keccak256Hex, recoverAddressFromSignature } from '@acg/secp256k1';

/** Request headers carrying the searcher signature; the first is docs/spec-notes.md 4's name, the second the Flashbots alias. */
export const SIGNATURE_HEADERS = ['x-bundle-signature', 'x-flashbots-signature'] as const;

/**
 * The text a searcher signs for a request body (Flashbots construction, docs/decisions.md "Bundle submission"):
 * `0x` + hex(keccak256(body bytes)), 66 characters, signed with EIP-191 `personal_sign`.
 * viem: `account.signMessage({ message: bundleSignatureMessage(body) })`; ethers v6:
 * `wallet.signMessage(ethers.id(body))` signs the same text.
 */
export function bundleSignatureMessage(body: Uint8Array | string): Hex {
  return keccak256Hex(typeof body === 'string' ? new TextEncoder().encode(body) : body);
}

const PERSONAL_SIGN_PREFIX = Buffer.from('\x19Ethereum Signed Message:\n66', 'latin1');

/** The EIP-191 digest the searcher signed: keccak256("\x19Ethereum Signed Message:\n66" + the 66-character text), as viem's `hashMessage`. */
export function bundleSignatureDigest(body: Uint8Array | string): Uint8Array {
  return keccak256Bytes(Buffer.concat([PERSONAL_SIGN_PREFIX, Buffer.from(bundleSignatureMessage(body), 'latin1')]));
}

/**
 * Verifies `X-Bundle-Signature: <address>:<signature>` (or `X-Flashbots-Signature`) over the exact
 * raw request bytes and returns the searcher identity (checksummed address). The key is recovered
 * with the native secp256k1 binding where it loads (`@acg/bundles` `secp256k1Backend()`).
 *
 * @param rawBody - The request body exactly as received (never re-serialized JSON).
 * @param header - The header value, or undefined when absent.
 * @throws {RpcError} an invalid request (-32600, status 401) with a message saying what is wrong: missing header, malformed value,
 *   signature without `0x`, unrecoverable signature, or signer ≠ claimed address (body tampered or wrong key).
 */
export async function verifyBundleSignature(rawBody: Uint8Array, header: string | undefined): Promise<Address> {
  const fail = (message: string, reason: string) => invalidRequest(message, { reason }, 401);
  if (!header)
    throw fail('Missing X-Bundle-Signature header: send "<address>:<signature>", an EIP-191 signature of 0x+hex(keccak256(body)).', 'signature_missing');
  const sep = header.indexOf(':');
  const claimed = sep > 0 ? header.slice(0, sep).trim() : '';
  const signature = sep > 0 ? header.slice(sep + 1).trim() : '';
  if (!isAddress(claimed, { strict: false }))
    throw fail('Malformed X-Bundle-Signature header: expected "<address>:<signature>" with a 0x-prefixed 20-byte address.', 'signature_malformed');
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) {
    throw fail('Malformed X-Bundle-Signature signature: expected 0x followed by 130 hex characters (65 bytes r, s, v).', 'signature_malformed');
  }
  let signer: Address;
  try {
    signer = recoverAddressFromSignature(bundleSignatureDigest(rawBody), Buffer.from(signature.slice(2), 'hex'));
  } catch {
    throw fail('Invalid X-Bundle-Signature: the signature cannot be recovered.', 'signature_invalid');
  }
  if (signer.toLowerCase() !== claimed.toLowerCase()) {
    throw fail(
      'Invalid X-Bundle-Signature: the signature does not match this address and request body (sign 0x+hex(keccak256(exact body bytes)) with EIP-191).',
      'signature_mismatch',
    );
  }
  return getAddress(claimed);
}
