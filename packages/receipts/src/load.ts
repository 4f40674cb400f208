import { buildJwks } from './jwks.js';
import { jwsKeyFromHex, signingKeyFromHex, type JwsKey, type PublishedJwk, type SigningKey } from './keys.js';
import { ProofSigner } from './proof.js';

/** The configured receipt keys: hex keys as in the environment, plus retired public JWKs. */
export interface ReceiptsConfig {
  jwsKey: `0x${string}`;
  signingKey: `0x${string}`;
  retiredJwks?: Record<string, unknown>[];
}

/** What a process signs with: the proof signer, the offer/receipt key, and the JWKS it publishes. */
export interface Receipts {
  proofs: ProofSigner;
  /** The Ed25519 key proofs are signed with, for other signed documents (`signDocument`: attestations, quotes). */
  jwsKey: JwsKey;
  signing: SigningKey;
  jwks: { keys: PublishedJwk[] };
}

/**
 * Loads the receipt keys (validated: a malformed key throws `ReceiptKeyError` naming its
 * variable) for payments on `network` (CAIP-2, e.g. `eip155:8453`).
 */
export async function loadReceipts(config: ReceiptsConfig, network: string): Promise<Receipts> {
  const [jws, signing] = await Promise.all([jwsKeyFromHex(config.jwsKey), signingKeyFromHex(config.signingKey)]);
  return { proofs: new ProofSigner(jws, network), jwsKey: jws, signing, jwks: buildJwks(jws, signing, (config.retiredJwks ?? []) as PublishedJwk[]) };
}
