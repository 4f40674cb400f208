import { CompactSign } from 'jose';
import type { JwsKey } from './keys.js';

/**
 * Signs a JSON document with the receipt JWS key (Ed25519, `alg` EdDSA), as proofs are signed: a
 * JWS compact serialization with header `{alg: "EdDSA", kid, typ}` and the document as its JSON
 * payload. Used for trust attestations (`typ` `acg-attestation+jws`) and quotes (`acg-quote+jws`);
 * verifiable with any JOSE library against `/.well-known/jwks.json` (this package's README).
 *
 * @example
 * const jws = await signDocument(receipts.jwsKey, { quote_id, price }, 'acg-quote+jws');
 * // jose: await compactVerify(jws, createLocalJWKSet(jwks))
 */
export async function signDocument(key: JwsKey, document: Record<string, unknown>, typ: string): Promise<string> {
  return new CompactSign(Buffer.from(JSON.stringify(document), 'utf8')).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ }).sign(key.privateKey);
}
