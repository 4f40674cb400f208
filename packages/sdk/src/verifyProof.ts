import canonicalize from 'canonicalize';
import { compactVerify, createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { AcgError } from './errors.js';

/**
 * What an execution proof asserts (docs/decisions.md "Proofs and receipts"): the execution and capability,
 * lowercase hex SHA-256 of the RFC 8785 canonical JSON of the input and of the result, the payment
 * (`amount`: integer USDC base units) and the provider (null for the gateway's own capabilities).
 */
export interface ExecutionProofPayload {
  execution_id: string;
  capability_id: string;
  input_sha256: string;
  result_sha256: string;
  payment: { network: string; payer: string; tx_hash: string; amount: string };
  provider: string | null;
  issued_at: string;
}

/** Why a proof did not verify: `missing_proof`, `bad_signature` (no JWKS key verifies it), `execution_mismatch`, `result_mismatch`, `input_mismatch`. */
export class ProofVerificationError extends AcgError {
  override name = 'ProofVerificationError';
  constructor(
    readonly code: 'missing_proof' | 'bad_signature' | 'execution_mismatch' | 'result_mismatch' | 'input_mismatch',
    shortMessage: string,
    cause?: unknown,
  ) {
    super(shortMessage, cause === undefined ? {} : { cause });
  }
}

/** Parameters of {@link verifyExecutionProof}. */
export interface VerifyExecutionProofParameters {
  /** The catalog's `jwks_url` (e.g. `https://gateway.example/.well-known/jwks.json`); fetched once and cached, refetched for an unknown `kid`. */
  jwksUrl: string;
  /** The input you sent; when given, its hash must match `input_sha256`. */
  input?: unknown;
}

const keySets = new Map<string, JWTVerifyGetKey>();

async function sha256Hex(value: unknown): Promise<string> {
  const text = canonicalize(value) ?? 'null';
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Verifies the `proof` of a SUCCEEDED execution (from `execute`, `getExecution` or a job step):
 * the JWS (EdDSA) against the gateway's JWKS, that it names this execution (and capability), and
 * that SHA-256 of the RFC 8785 canonical JSON of `result` (and of `input`, when given) equals the
 * signed hashes. Returns the signed payload.
 *
 * @throws {ProofVerificationError} with `code` on any mismatch.
 *
 * @example
 * const exe = await client.execute('intelligence.wallet_balances', input)
 * const claims = await verifyExecutionProof(exe, { jwksUrl: `${baseUrl}/.well-known/jwks.json`, input })
 * claims.payment.tx_hash // the settlement this result was paid by
 */
export async function verifyExecutionProof(
  execution: { execution_id: string; capability_id?: string; result: unknown; proof?: string | null },
  { jwksUrl, input }: VerifyExecutionProofParameters,
): Promise<ExecutionProofPayload> {
  if (!execution.proof) throw new ProofVerificationError('missing_proof', 'This execution carries no proof (FAILED, or the gateway signs no proofs).');
  let keys = keySets.get(jwksUrl);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(jwksUrl));
    keySets.set(jwksUrl, keys);
  }
  let payload: ExecutionProofPayload;
  try {
    const verified = await compactVerify(execution.proof, keys, { algorithms: ['EdDSA'] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as ExecutionProofPayload;
  } catch (e) {
    throw new ProofVerificationError('bad_signature', 'The proof does not verify against the gateway JWKS.', e);
  }
  if (payload.execution_id !== execution.execution_id || (execution.capability_id !== undefined && payload.capability_id !== execution.capability_id)) {
    throw new ProofVerificationError('execution_mismatch', 'The proof is about another execution.');
  }
  if ((await sha256Hex(execution.result)) !== payload.result_sha256)
    throw new ProofVerificationError('result_mismatch', 'The result does not match the signed result_sha256.');
  if (input !== undefined && (await sha256Hex(input)) !== payload.input_sha256)
    throw new ProofVerificationError('input_mismatch', 'The input does not match the signed input_sha256.');
  return payload;
}
