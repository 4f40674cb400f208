/**
 * @acg/receipts: verifiable executions (docs/spec-notes.md 2.2 `proof`, `jwks_url`; docs/decisions.md "Proofs and
 * receipts"): the two receipt keys and their JWKS, JWS proofs of results (EdDSA over RFC 8785
 * hashes) and their verification.
 */
export { buildJwks } from './jwks.js';
export { devReceiptKeys, jwsKeyFromHex, ReceiptKeyError, signingKeyFromHex, type JwsKey, type PublishedJwk, type SigningKey } from './keys.js';
export { canonicalSha256, PROOF_SCHEME, ProofSigner, type ProofPayload, type ProofPayment, type ProofSubject } from './proof.js';
export { ProofVerificationError, verifyProof } from './verify.js';
export { loadReceipts, type Receipts, type ReceiptsConfig } from './load.js';
export { signDocument } from './signedDocument.js';
