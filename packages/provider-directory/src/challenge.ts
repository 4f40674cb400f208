import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson } from '@acg/provider-kit';
import type { RedisKeys } from '@acg/redis';
import type { ProviderAction, ProviderChallenge, ProviderOffer, SignedChallenge } from '@acg/schemas';
import type { Redis } from 'ioredis';
import { getAddress, verifyMessage, type Hex } from 'viem';
import { ProviderError } from './errors.js';

/** How long a challenge may be signed and used: 10 minutes (docs/decisions.md "Providers"). */
export const CHALLENGE_TTL_SECONDS = 600;

const NONCE_LINE = /^Nonce: ([0-9a-f]{32})$/m;

/**
 * What one challenge authorizes (issue 23 item 8): the `action`, the provider it acts on (`update`,
 * `retire`), and for `register`/`update` the {@link authorizedDigest} of the body fields it allows.
 */
export interface ChallengeScope {
  action: ProviderAction;
  providerId?: string;
  /** {@link authorizedDigest} of `name`, `endpoint` and `capabilities` (register, update). */
  digest?: string;
}

/** The body fields a register/update signature authorizes. */
export interface AuthorizedFields {
  name: string;
  endpoint: string;
  capabilities: ProviderOffer[];
}

/**
 * SHA-256 (lowercase hex, 64 characters) of the RFC 8785 canonical JSON of `{name, endpoint,
 * capabilities}`, as the gateway parsed them (defaults applied): the digest a register/update
 * challenge names. Throws {@link ProviderError} `invalid_body` 400 when the fields have no JSON
 * form (e.g. a non-finite number).
 */
export function authorizedDigest(f: AuthorizedFields): string {
  let text: string;
  try {
    text = canonicalJson({ name: f.name, endpoint: f.endpoint, capabilities: f.capabilities });
  } catch {
    throw new ProviderError('invalid_body', 400, 'name, endpoint and capabilities must be plain JSON (finite numbers, valid strings).');
  }
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const ACTION_TEXT: Record<ProviderAction, string> = {
  register: 'register a new capability provider',
  update: "replace a capability provider's name, endpoint and offers",
  retire: 'retire a capability provider',
};

/**
 * The plain text a provider signs with EIP-191 (`personal_sign`): the gateway host and the action
 * in words, then one per line the action, the provider (`new` for register), the SHA-256 of the
 * authorized body fields (`none` for retire), the address (EIP-55), the nonce and the issue and
 * expiry times, so a wallet shows the user what it signs and a signature authorizes that one thing.
 */
export function challengeMessage(host: string, address: string, nonce: string, issuedAt: Date, expiresAt: Date, scope: ChallengeScope): string {
  return [
    `${host} asks you to sign to ${ACTION_TEXT[scope.action]}.`,
    '',
    `Action: ${scope.action}`,
    `Provider: ${scope.providerId ?? 'new'}`,
    `Body SHA-256: ${scope.digest ?? 'none'}`,
    `Address: ${getAddress(address)}`,
    `Nonce: ${nonce}`,
    `Issued At: ${issuedAt.toISOString()}`,
    `Expiration Time: ${expiresAt.toISOString()}`,
    '',
    'Signing proves you control this address and authorizes only this action on this body. It costs nothing and sends no transaction.',
  ].join('\n');
}

interface StoredChallenge {
  address: string;
  message: string;
  expires_at_ms: number;
  action: ProviderAction;
  provider_id: string | null;
  digest: string | null;
}

/**
 * Single-use EIP-191 challenges for provider onboarding, update and retirement (docs/decisions.md
 * "Providers"), each bound to one action, one provider and one body digest ({@link ChallengeScope}).
 * A challenge is stored under its nonce with the address, the exact message and its scope for
 * {@link CHALLENGE_TTL_SECONDS}. {@link verify} checks it without using it up (so the caller can
 * check the signature before any other work, and a body error does not burn it); {@link take}
 * removes it atomically (GETDEL), so a nonce authorizes at most one request even under concurrency.
 */
export class ChallengeStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly now: () => number = Date.now,
  ) {}

  /** Issues a challenge for `address` naming `host` (the gateway's public host) and what it authorizes. */
  async issue(address: string, host: string, scope: ChallengeScope): Promise<ProviderChallenge> {
    const nonce = randomBytes(16).toString('hex');
    const issuedAt = new Date(this.now());
    const expiresAt = new Date(issuedAt.getTime() + CHALLENGE_TTL_SECONDS * 1000);
    const message = challengeMessage(host, address, nonce, issuedAt, expiresAt, scope);
    const stored: StoredChallenge = {
      address: address.toLowerCase(),
      message,
      expires_at_ms: expiresAt.getTime(),
      action: scope.action,
      provider_id: scope.providerId ?? null,
      digest: scope.digest ?? null,
    };
    await this.redis.set(this.keys.providers('nonce', nonce), JSON.stringify(stored), 'EX', CHALLENGE_TTL_SECONDS);
    return { message, nonce, expires_at: expiresAt.toISOString() };
  }

  /**
   * Verifies a signed challenge for `scope` without using it up; the signature is checked before
   * the scope, and nothing else is read. Returns the signer's checksummed address. Throws
   * {@link ProviderError}: `invalid_challenge` 400 (no nonce line, or the message or address differ
   * from what was issued), `challenge_used` 401 (unknown or already used nonce: they are single use
   * and expire after 10 minutes), `challenge_expired` 401, `bad_signature` 401 (not `address`'s
   * EIP-191 signature of `message`), `challenge_mismatch` 403 (signed for another action, provider
   * or body). A bad signature or a mismatch burns the nonce.
   */
  async verify(signed: SignedChallenge, scope: ChallengeScope): Promise<`0x${string}`> {
    const nonce = NONCE_LINE.exec(signed.message)?.[1];
    if (!nonce) throw new ProviderError('invalid_challenge', 400, 'The message is not a challenge from POST /api/v1/providers/challenge.');
    const key = this.keys.providers('nonce', nonce);
    const stored = await this.redis.get(key);
    if (!stored) throw new ProviderError('challenge_used', 401, 'This challenge is unknown or was already used; request a new one.');
    const record = JSON.parse(stored) as StoredChallenge;
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
    if (!valid) {
      await this.redis.del(key);
      throw new ProviderError('bad_signature', 401, `The signature is not an EIP-191 signature of the message by ${signed.address}.`);
    }
    const mismatch =
      record.action !== scope.action
        ? 'action'
        : (record.provider_id ?? null) !== (scope.providerId ?? null)
          ? 'provider'
          : (record.digest ?? null) !== (scope.digest ?? null)
            ? 'body'
            : undefined;
    if (mismatch) {
      await this.redis.del(key);
      throw new ProviderError(
        'challenge_mismatch',
        403,
        `This challenge authorizes ${record.action}${record.provider_id ? ` of ${record.provider_id}` : ''} with another ${mismatch}; request a challenge for this ${scope.action} and this body.`,
        { signed_action: record.action },
      );
    }
    return getAddress(signed.address);
  }

  /** Uses a verified challenge up (GETDEL). Throws `challenge_used` 401 when another request took it first. */
  async take(signed: SignedChallenge): Promise<void> {
    const nonce = NONCE_LINE.exec(signed.message)?.[1];
    const stored = nonce ? await this.redis.getdel(this.keys.providers('nonce', nonce)) : null;
    if (!stored || (JSON.parse(stored) as StoredChallenge).message !== signed.message) {
      throw new ProviderError('challenge_used', 401, 'This challenge is unknown or was already used; request a new one.');
    }
  }

  /** {@link verify} then {@link take}: for requests with nothing to check in between. */
  async consume(signed: SignedChallenge, scope: ChallengeScope): Promise<`0x${string}`> {
    const address = await this.verify(signed, scope);
    await this.take(signed);
    return address;
  }
}
