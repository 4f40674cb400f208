import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import { verifyMessage, type Address, type Hex, type LocalAccount } from 'viem';

/**
 * RFC 8785 (JCS) canonical JSON of `value` (the `canonicalize` package, the RFC authors' reference
 * implementation): object keys sorted by UTF-16 code unit, no whitespace, ECMAScript number form.
 *
 * @throws {Error} for values JSON cannot hold (NaN, Infinity, a lone surrogate, a cycle, a bigint)
 *   or a top-level `undefined`.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('canonicalJson: the value has no JSON representation');
  return text;
}

/**
 * `result_sha256` of docs/decisions.md "Proofs and receipts": lowercase hex SHA-256 (64 characters, no `0x`)
 * of the UTF-8 bytes of the RFC 8785 canonical JSON of `result`. The gateway's JWS proof carries
 * the same hash.
 *
 * @example resultSha256({ b: 1, a: 'x' }) // sha256 of '{"a":"x","b":1}'
 */
export function resultSha256(result: unknown): string {
  return createHash('sha256').update(canonicalJson(result), 'utf8').digest('hex');
}

/**
 * The text a provider signs with EIP-191 (`personal_sign`) for one answer:
 * `acg-result:<execution_id>:<result_sha256>` (schema `ProviderCallResponse`, docs/decisions.md "Proofs and receipts").
 */
export function resultSignatureMessage(executionId: string, resultHash: string): string {
  return `acg-result:${executionId}:${resultHash}`;
}

/**
 * Signs one answer: EIP-191 signature by `account` over {@link resultSignatureMessage} of the
 * execution id and {@link resultSha256} of `result`.
 *
 * @returns `signature` (65-byte hex) and the `result_sha256` it covers.
 * @throws {Error} from {@link canonicalJson} (a result JSON cannot hold) or from the account's signer.
 */
export async function signResult(account: LocalAccount, executionId: string, result: unknown): Promise<{ signature: Hex; result_sha256: string }> {
  const hash = resultSha256(result);
  const signature = await account.signMessage({ message: resultSignatureMessage(executionId, hash) });
  return { signature, result_sha256: hash };
}

/**
 * Checks a provider's answer signature (what the gateway stores as dispute evidence): true when
 * `signature` is `address`'s EIP-191 signature of `acg-result:<executionId>:<sha256 of canonical result>`.
 * Never throws for a malformed signature or a result JSON cannot hold (false).
 */
export async function verifyResultSignature(params: { address: Address; executionId: string; result: unknown; signature: Hex }): Promise<boolean> {
  try {
    const message = resultSignatureMessage(params.executionId, resultSha256(params.result));
    return await verifyMessage({ address: params.address, message, signature: params.signature });
  } catch {
    return false;
  }
}
