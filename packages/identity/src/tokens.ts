import { createHash } from 'node:crypto';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { AuthError } from './errors.js';
import { newAccessToken } from './siwe.js';
import { identityKeys } from './commands/keys.js';

/** `POST /v1/auth/token` response (docs/decisions.md "Accounts and bearer tokens"). */
export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  /** seconds until the token expires */
  expires_in: number;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Opaque bearer tokens, stored only as their sha256 in Redis with a TTL (expiring), listed per
 * wallet (revocable one by one or all at once). Shared by every gateway replica.
 */
export class TokenStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    /** token lifetime, seconds (default 24 h) */
    private readonly ttlSeconds = 24 * 3600,
  ) {}

  /** Issues a token for `address`. */
  async issue(address: `0x${string}`): Promise<IssuedToken> {
    const token = newAccessToken();
    const hash = sha256(token);
    await this.redis
      .multi()
      .set(identityKeys.bearerToken(this.keys, hash), address, 'EX', this.ttlSeconds)
      .sadd(identityKeys.walletTokens(this.keys, address), hash)
      .expire(identityKeys.walletTokens(this.keys, address), this.ttlSeconds)
      .exec();
    return { access_token: token, token_type: 'Bearer', expires_in: this.ttlSeconds };
  }

  /** The wallet a token belongs to. Throws AuthError `invalid_token` for unknown, expired or revoked tokens. */
  async resolve(token: string): Promise<`0x${string}`> {
    if (!/^acg_[A-Za-z0-9_-]{43}$/.test(token)) throw new AuthError('invalid_token', 'The bearer token is malformed.');
    const address = await this.redis.get(identityKeys.bearerToken(this.keys, sha256(token)));
    if (!address) throw new AuthError('invalid_token', 'The bearer token is unknown, expired or revoked; sign in again.');
    return address as `0x${string}`;
  }

  /** Revokes one token (idempotent). */
  async revoke(token: string): Promise<void> {
    const hash = sha256(token);
    const address = await this.redis.get(identityKeys.bearerToken(this.keys, hash));
    await this.redis.del(identityKeys.bearerToken(this.keys, hash));
    if (address) await this.redis.srem(identityKeys.walletTokens(this.keys, address), hash);
  }
}
