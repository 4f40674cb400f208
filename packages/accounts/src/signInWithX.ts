import type { RedisKeys } from '@acg/redis';
import { parseSIWxHeader, validateSIWxMessage, verifySIWxSignature, type SIWxPayload } from '@x402/extensions/sign-in-with-x';
import type { Redis } from 'ioredis';
import { getAddress, type PublicClient } from 'viem';
import { AuthError } from './errors.js';

/** Where sign-in-with-x proofs are valid: the gateway's public origin and the payment network. */
export interface SignInWithXSite {
  /** The gateway's public origin, e.g. `https://gateway.example.com` (`domain` must be its host, `uri` on it). */
  origin: string;
  /** CAIP-2 network the proof must name, the payment network (`eip155:8453`). */
  network: string;
}

/** Longest a proof's `issuedAt` may lie in the past, ms (x402 `sign-in-with-x` default, 5 minutes). */
export const SIGN_IN_WITH_X_MAX_AGE_MS = 5 * 60 * 1000;

/** The request header carrying a signed challenge (x402 `sign-in-with-x`: base64 JSON of the proof). */
export const SIGN_IN_WITH_X_HEADER = 'sign-in-with-x';

/**
 * Verifies x402 `sign-in-with-x` proofs (CAIP-122 / EIP-4361; packages/accounts README
 * "Sign-in-with-x") with `@x402/extensions/sign-in-with-x`: the header is parsed by
 * `parseSIWxHeader`; `validateSIWxMessage` checks that `domain` is the gateway's public host and
 * `uri` on its origin, `issuedAt` at most 5 minutes old and not in the future, `expirationTime`
 * not passed and `notBefore` reached; the chain must be the payment network; `verifySIWxSignature`
 * checks the signature (EOA, and ERC-1271 / ERC-6492 wallets through the payment chain). Last,
 * the nonce is consumed atomically in Redis (`SET NX`, kept as long as a proof could be valid), so
 * a proof is accepted once: a replayed header is refused with `nonce_used`.
 */
export class SignInWithX {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly site: () => SignInWithXSite,
    private readonly client: PublicClient,
  ) {}

  /** The Redis key marking a sign-in-with-x nonce as used (this package's key; see the README). */
  usedNonceKey(nonce: string): string {
    return `${this.keys.prefix}auth:siwx:${nonce}`;
  }

  /**
   * Verifies the `SIGN-IN-WITH-X` header value and consumes its nonce. Returns the checksummed
   * address that signed. Throws AuthError: `invalid_message` (not a proof), `wrong_domain`
   * (domain or uri), `wrong_chain`, `expired` (too old, expired, or issued in the future),
   * `not_yet_valid`, `bad_signature`, `nonce_used` (replayed).
   */
  async verify(header: string): Promise<`0x${string}`> {
    let payload: SIWxPayload;
    try {
      payload = parseSIWxHeader(header.trim());
    } catch {
      throw new AuthError('invalid_message', 'SIGN-IN-WITH-X must be the base64 JSON of a signed sign-in-with-x challenge.');
    }
    const site = this.site();
    const validation = await validateSIWxMessage(payload, new URL(site.origin), { maxAge: SIGN_IN_WITH_X_MAX_AGE_MS });
    if (!validation.isValid) {
      const code = VALIDATION_CODES[validation.invalidReason] ?? 'invalid_message';
      throw new AuthError(code, `The sign-in-with-x proof was refused (${validation.invalidReason}); sign the challenge of a new 402.`);
    }
    if (payload.chainId !== site.network) throw new AuthError('wrong_chain', `The sign-in-with-x proof must name chain ${site.network}.`);
    let verified: Awaited<ReturnType<typeof verifySIWxSignature>>;
    try {
      verified = await verifySIWxSignature(payload, { evmVerifier: (args) => this.client.verifyMessage(args) });
    } catch {
      verified = { isValid: false, invalidReason: 'invalid_siwx_verifier_error', invalidMessage: '' };
    }
    if (!verified.isValid) throw new AuthError('bad_signature', 'The sign-in-with-x signature does not match the message and address.');
    // single use: only the first request carrying this nonce is signed in; kept (with a minute of
    // margin) for as long as its issuedAt is accepted, after which the proof is refused as too old
    const ttlSeconds = Math.ceil(SIGN_IN_WITH_X_MAX_AGE_MS / 1000) + 60;
    const first = await this.redis.set(this.usedNonceKey(payload.nonce), getAddress(verified.payer), 'EX', ttlSeconds, 'NX');
    if (first !== 'OK') throw new AuthError('nonce_used', 'This sign-in-with-x proof was already used; sign the challenge of a new 402.');
    return getAddress(verified.payer);
  }
}

/** AuthError codes for the library's validation codes (the same codes as Sign-In with Ethereum). */
const VALIDATION_CODES: Record<string, string> = {
  invalid_siwx_domain_mismatch: 'wrong_domain',
  invalid_siwx_uri_mismatch: 'wrong_domain',
  invalid_siwx_issued_at: 'invalid_message',
  invalid_siwx_issued_at_too_old: 'expired',
  invalid_siwx_issued_at_in_future: 'expired',
  invalid_siwx_expiration_time: 'invalid_message',
  invalid_siwx_expired: 'expired',
  invalid_siwx_not_before: 'invalid_message',
  invalid_siwx_not_yet_valid: 'not_yet_valid',
};
