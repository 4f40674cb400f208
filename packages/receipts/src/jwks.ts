import type { JwsKey, PublishedJwk, SigningKey } from './keys.js';

/**
 * The gateway's JWKS (`GET /.well-known/jwks.json`, RFC 7517): the current Ed25519 proof key, the
 * secp256k1 offer/receipt key, then `retired` public keys (rotation: proofs signed by an earlier key
 * keep verifying while it is listed; each JWS names its `kid`).
 */
export function buildJwks(jws: JwsKey, signing: SigningKey, retired: readonly PublishedJwk[] = []): { keys: PublishedJwk[] } {
  const keys = [jws.publicJwk, signing.publicJwk];
  const kids = new Set(keys.map((k) => k.kid));
  for (const k of retired) if (!kids.has(k.kid)) keys.push(k);
  return { keys };
}
