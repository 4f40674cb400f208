import { createHash } from 'node:crypto';
import { canonicalize } from '@x402/extensions/offer-receipt';
import { CompactSign } from 'jose';
import type { JwsKey } from './keys.js';

/** The name of the proof scheme in the catalog's `proof` field. */
export const PROOF_SCHEME = 'jws-eddsa';

/** What a proof says was paid: CAIP-2 network, payer, settlement tx hash, amount (integer string, USDC base units). */
export interface ProofPayment {
  network: string;
  payer: string;
  tx_hash: string;
  amount: string;
}

/**
 * The payload of an execution proof (docs/decisions.md "Proofs and receipts"): which execution of which
 * capability, the SHA-256 (lowercase hex) of the RFC 8785 canonical JSON of its input and of its
 * result, what was paid, the provider (null for the gateway's own capabilities; for a capability
 * offered by providers, the one whose offer answered, `{provider_id, name}`: docs/marketplace.md)
 * and when it was issued (RFC 3339).
 */
export interface ProofPayload {
  execution_id: string;
  capability_id: string;
  input_sha256: string;
  result_sha256: string;
  payment: ProofPayment;
  provider: string | { provider_id: string; name: string } | null;
  issued_at: string;
}

/** Lowercase hex SHA-256 of the RFC 8785 (JCS) canonical JSON of `value` (`canonicalize` of @x402/extensions). */
export function canonicalSha256(value: unknown): string {
  return createHash('sha256').update(canonicalize(value), 'utf8').digest('hex');
}

/** What {@link ProofSigner.sign} takes: the execution as it is answered. */
export interface ProofSubject {
  execution_id: string;
  capability_id: string;
  input: unknown;
  result: unknown;
  payment: Omit<ProofPayment, 'network'> & { network?: string };
  provider?: string | { provider_id: string; name: string } | null;
}

/**
 * Signs execution proofs: a JWS compact serialization, header `{alg: "EdDSA", kid, typ:
 * "acg-proof+jws"}`, payload {@link ProofPayload} as JSON. Verifiable with any JOSE library
 * against the JWKS at `/.well-known/jwks.json`.
 *
 * @example
 * const proof = await signer.sign({ execution_id, capability_id, input, result, payment: { payer, tx_hash, amount } });
 * // "eyJhbGciOiJFZERTQSIsImtpZCI6Ii4uLiJ9.eyJleGVjdXRpb25faWQiOi4uLn0.<signature>"
 */
export class ProofSigner {
  constructor(
    private readonly key: JwsKey,
    /** CAIP-2 network of payments, e.g. `eip155:8453` */
    private readonly network: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The `kid` proofs are signed with. */
  get kid(): string {
    return this.key.kid;
  }

  /** The proof payload of `s` (hashes computed here). */
  payload(s: ProofSubject): ProofPayload {
    return {
      execution_id: s.execution_id,
      capability_id: s.capability_id,
      input_sha256: canonicalSha256(s.input),
      result_sha256: canonicalSha256(s.result),
      payment: { network: s.payment.network ?? this.network, payer: s.payment.payer, tx_hash: s.payment.tx_hash, amount: s.payment.amount },
      provider: s.provider ?? null,
      issued_at: this.now().toISOString(),
    };
  }

  /** The JWS compact proof of `s`. */
  async sign(s: ProofSubject): Promise<string> {
    return new CompactSign(Buffer.from(JSON.stringify(this.payload(s)), 'utf8'))
      .setProtectedHeader({ alg: 'EdDSA', kid: this.key.kid, typ: 'acg-proof+jws' })
      .sign(this.key.privateKey);
  }
}
