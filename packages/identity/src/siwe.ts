import { randomBytes } from 'node:crypto';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { getAddress, isAddress, type PublicClient } from 'viem';
import { createSiweMessage, generateSiweNonce, parseSiweMessage } from 'viem/siwe';
import { AuthError } from './errors.js';
import { identityKeys } from './commands/keys.js';

/** Where sign-in messages are valid: the gateway's host and URL, and the payment chain. */
export interface SiweDomain {
  /** RFC 3986 authority of the gateway, e.g. `gateway.example.com` or `127.0.0.1:8080`. */
  domain: string;
  /** The gateway's base URL, the message `uri`. */
  uri: string;
  /** EIP-155 chain id the message names (the payment chain, 8453). */
  chainId: number;
}

/** A nonce and the EIP-4361 message to sign (`POST /v1/auth/nonce`). */
export interface SiweChallenge {
  nonce: string;
  message: string;
  /** RFC 3339 UTC; the message must be signed and exchanged before this. */
  expires_at: string;
}

const NONCE_TTL_SECONDS = 300;
const STATEMENT = 'Sign in to the agent capability gateway. This request costs nothing and grants a bearer token for your metered account.';

/**
 * Sign-In with Ethereum (EIP-4361) with viem's SIWE utilities (docs/decisions.md "Accounts and bearer tokens"):
 * `challenge(address)` issues a single-use nonce and the message; `verify(message, signature)`
 * checks domain, uri, chain, times and nonce field by field (clear codes), verifies the signature
 * on the payment chain (EOA, ERC-1271 and ERC-6492 wallets) and consumes the nonce.
 */
export class SiweAuthenticator {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly site: () => SiweDomain,
    private readonly client: PublicClient,
  ) {}

  /** Issues a nonce for `address` (any case) and the message it must sign. Throws AuthError `invalid_address`. */
  async challenge(address: string): Promise<SiweChallenge> {
    if (!isAddress(address, { strict: false })) throw new AuthError('invalid_address', 'address must be 0x followed by 40 hex characters.');
    const nonce = generateSiweNonce();
    const issuedAt = new Date();
    const expirationTime = new Date(issuedAt.getTime() + NONCE_TTL_SECONDS * 1000);
    const site = this.site();
    const message = createSiweMessage({
      address: getAddress(address),
      chainId: site.chainId,
      domain: site.domain,
      uri: site.uri,
      nonce,
      version: '1',
      statement: STATEMENT,
      issuedAt,
      expirationTime,
    });
    await this.redis.set(identityKeys.siweNonce(this.keys, nonce), getAddress(address), 'EX', NONCE_TTL_SECONDS);
    return { nonce, message, expires_at: expirationTime.toISOString() };
  }

  /**
   * Verifies a signed sign-in message and consumes its nonce. Returns the checksummed address.
   * Throws AuthError with a code naming the first failed check.
   */
  async verify(message: string, signature: `0x${string}`): Promise<`0x${string}`> {
    let parsed: ReturnType<typeof parseSiweMessage>;
    try {
      parsed = parseSiweMessage(message);
    } catch {
      throw new AuthError('invalid_message', 'The message is not an EIP-4361 sign-in message.');
    }
    if (!parsed.address || !parsed.nonce || !parsed.domain || parsed.version !== '1') {
      throw new AuthError('invalid_message', 'The message lacks address, nonce, domain or version 1.');
    }
    const site = this.site();
    if (parsed.domain !== site.domain) throw new AuthError('wrong_domain', `The message is for ${parsed.domain}, not ${site.domain}.`);
    if (parsed.uri !== site.uri) throw new AuthError('wrong_domain', `The message uri must be ${site.uri}.`);
    if (parsed.chainId !== site.chainId) throw new AuthError('wrong_chain', `The message must name chain ${site.chainId}.`);
    const now = Date.now();
    if (parsed.expirationTime && parsed.expirationTime.getTime() <= now)
      throw new AuthError('expired', 'The sign-in message has expired; request a new nonce.');
    if (parsed.notBefore && parsed.notBefore.getTime() > now) throw new AuthError('not_yet_valid', 'The sign-in message is not valid yet (notBefore).');
    const nonceOwner = await this.redis.get(identityKeys.siweNonce(this.keys, parsed.nonce));
    if (!nonceOwner || nonceOwner.toLowerCase() !== parsed.address.toLowerCase()) {
      throw new AuthError('unknown_nonce', 'The nonce is unknown, used or expired; request a new one with POST /v1/auth/nonce.');
    }
    let valid = false;
    try {
      valid = await this.client.verifyMessage({ address: parsed.address, message, signature });
    } catch {
      valid = false;
    }
    if (!valid) throw new AuthError('bad_signature', 'The signature does not match the message and address.');
    // single use: only the request that deletes the nonce gets a token
    const consumed = await this.redis.del(identityKeys.siweNonce(this.keys, parsed.nonce));
    if (consumed !== 1) throw new AuthError('unknown_nonce', 'The nonce was already used.');
    return getAddress(parsed.address);
  }
}

/** A new opaque bearer token: `acg_` + 32 random bytes base64url. */
export function newAccessToken(): string {
  return `acg_${randomBytes(32).toString('base64url')}`;
}
