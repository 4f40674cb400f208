import { randomBytes } from 'node:crypto';
import type { RedisKeys } from '@acg/redis';
import type { ProviderChallenge, SignedChallenge } from '@acg/schemas';
import type { Redis } from 'ioredis';
import { getAddress, verifyMessage, type Hex } from 'viem';
import { ProviderError } from './errors.js';

/** How long a challenge may be signed and used: 10 minutes (DESIGN "Providers"). */
export const CHALLENGE_TTL_SECONDS = 600;

const NONCE_LINE = /^Nonce: ([0-9a-f]{32})$/m;

/**
 * The plain text a provider signs with EIP-191 (`personal_sign`): the gateway host, the address
 * (EIP-55), the nonce and the issue time, one per line, so a wallet shows the user what it signs.
 */
export function challengeMessage(host: string, address: string, nonce: string, issuedAt: Date, expiresAt: Date): string {
  return [
    `${host} asks you to sign in as a capability provider.`,
    '',
    `Address: ${getAddress(address)}`,
    `Nonce: ${nonce}`,
    `Issued At: ${issuedAt.toISOString()}`,
    `Expiration Time: ${expiresAt.toISOString()}`,
    '',
    'Signing proves you control this address. It costs nothing and sends no transaction.',
  ].join('\n');
}

/**
 * Single-use EIP-191 challenges for provider onboarding, update and retirement (DESIGN
 * "Providers"). A challenge is stored under its nonce with the address and the exact message for
 * {@link CHALLENGE_TTL_SECONDS}; {@link consume} takes it out atomically (GETDEL), so a nonce
 * verifies at most once even under concurrent requests.
 */
export class ChallengeStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly now: () => number = Date.now,
  ) {}

  /** Issues a challenge for `address` naming `host` (the gateway's public host). */
  async issue(address: string, host: string): Promise<ProviderChallenge> {
    const nonce = randomBytes(16).toString('hex');
    const issuedAt = new Date(this.now());
    const expiresAt = new Date(issuedAt.getTime() + CHALLENGE_TTL_SECONDS * 1000);
    const message = challengeMessage(host, address, nonce, issuedAt, expiresAt);
    await this.redis.set(
      this.keys.providers('nonce', nonce),
      JSON.stringify({ address: address.toLowerCase(), message, expires_at_ms: expiresAt.getTime() }),
      'EX',
      CHALLENGE_TTL_SECONDS,
    );
    return { message, nonce, expires_at: expiresAt.toISOString() };
  }

  /**
   * Verifies a signed challenge and uses its nonce up. Returns the signer's checksummed address.
   * Throws {@link ProviderError}: `invalid_challenge` 400 (no nonce line, or the message or address
   * differ from what was issued), `challenge_used` 401 (unknown or already used nonce: they are
   * single use and expire after 10 minutes), `challenge_expired` 401, `bad_signature` 401 (the
   * signature is not `address`'s EIP-191 signature of `message`). The nonce is consumed before the
   * signature is checked, so a forged attempt also burns it.
   */
  async consume(signed: SignedChallenge): Promise<`0x${string}`> {
    const nonce = NONCE_LINE.exec(signed.message)?.[1];
    if (!nonce) throw new ProviderError('invalid_challenge', 400, 'The message is not a challenge from POST /api/v1/providers/challenge.');
    const stored = await this.redis.getdel(this.keys.providers('nonce', nonce));
    if (!stored) throw new ProviderError('challenge_used', 401, 'This challenge is unknown or was already used; request a new one.');
    const record = JSON.parse(stored) as { address: string; message: string; expires_at_ms: number };
    if (record.message !== signed.message || record.address !== signed.address.toLowerCase()) {
      throw new ProviderError('invalid_challenge', 400, 'The message or address differs from the challenge that was issued.');
    }
    if (this.now() > record.expires_at_ms) throw new ProviderError('challenge_expired', 401, 'The challenge expired; request a new one.');
    let valid = false;
    try {
      valid = await verifyMessage({ address: getAddress(signed.address), message: signed.message, signature: signed.signature as Hex });
    } catch {
      valid = false;
    }
    if (!valid) throw new ProviderError('bad_signature', 401, `The signature is not an EIP-191 signature of the message by ${signed.address}.`);
    return getAddress(signed.address);
  }
}
