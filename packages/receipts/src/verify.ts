import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { canonicalSha256, type ProofPayload } from './proof.js';

/** Why a proof did not verify: `bad_signature` (no key of the set verifies it, or it is malformed), `input_mismatch`, `result_mismatch`, `execution_mismatch`. */
export class ProofVerificationError extends Error {
  override name = 'ProofVerificationError';
  constructor(
    readonly code: 'bad_signature' | 'input_mismatch' | 'result_mismatch' | 'execution_mismatch',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Verifies an execution proof against a JWKS (EdDSA keys; the header's `kid` picks one) and
 * checks that it is about `execution` (id and capability) and that both hashes match its input and
 * result. Returns the payload; throws {@link ProofVerificationError}.
 */
export async function verifyProof(
  proof: string,
  jwks: JSONWebKeySet,
  execution: { execution_id: string; capability_id?: string; input?: unknown; result: unknown },
): Promise<ProofPayload> {
  let payload: ProofPayload;
  try {
    const { payload: bytes } = await compactVerify(proof, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
    payload = JSON.parse(new TextDecoder().decode(bytes)) as ProofPayload;
  } catch (e) {
    throw new ProofVerificationError('bad_signature', `the proof does not verify: ${(e as Error).message}`);
  }
  if (payload.execution_id !== execution.execution_id || (execution.capability_id && payload.capability_id !== execution.capability_id)) {
    throw new ProofVerificationError('execution_mismatch', 'the proof is about another execution');
  }
  if (canonicalSha256(execution.result) !== payload.result_sha256)
    throw new ProofVerificationError('result_mismatch', 'the result does not match result_sha256');
  if (execution.input !== undefined && canonicalSha256(execution.input) !== payload.input_sha256) {
    throw new ProofVerificationError('input_mismatch', 'the input does not match input_sha256');
  }
  return payload;
}
