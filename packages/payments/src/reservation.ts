import { isRedisUnavailable, retryWhileRedisUnavailable, type RedisKeys } from '@acg/redis';
import {
  claimIdempotencyKey,
  readAuthorization,
  releaseAuthorization,
  releaseBinding,
  reserveAuthorization,
  transitionAuthorization,
  type AuthorizationRecord,
  type AuthorizationState,
  type ReserveAuthorizationReturnType,
} from './commands/index.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { paymentKeys } from './commands/keys.js';

/** One EIP-3009 authorization (payer `from`, `nonce` on `asset`) and its reservation key. */
export interface AuthorizationRef {
  authKey: string;
  asset: `0x${string}`;
  from: `0x${string}`;
  nonce: `0x${string}`;
}

/**
 * The reservation of each authorization in Redis (`reserve_authorization`, `transition_authorization`,
 * `release_authorization`): taken before settlement so one payment runs one operation once; its
 * state (`AuthorizationState`) moves by compare-and-set on the holding operation id.
 */
export class Reservations {
  constructor(
    private readonly redis: Redis,
    /** the deployment's key names (the settlement's finality record is kept under them too) */
    readonly keys: RedisKeys,
    private readonly log: Logger,
    readonly retentionSeconds: number,
  ) {}

  read(authKey: string): Promise<AuthorizationRecord | undefined> {
    return readAuthorization(this.redis, authKey);
  }

  /** Reserves `ref` in state `pending` for `operationId`, or returns the reservation that exists. */
  reserve(
    ref: AuthorizationRef,
    p: { requestHash: string; payloadHash: string; operationId: string; amount: string; scheme?: string },
  ): Promise<ReserveAuthorizationReturnType> {
    return this.beforeSettlement(ref.authKey, p.operationId, () =>
      reserveAuthorization(this.redis, {
        authKey: ref.authKey,
        inFlightKey: paymentKeys.authorizationsInFlight(this.keys),
        requestHash: p.requestHash,
        payloadHash: p.payloadHash,
        operationId: p.operationId,
        nowMs: Date.now(),
        retentionSeconds: this.retentionSeconds,
        asset: ref.asset,
        from: ref.from,
        nonce: ref.nonce,
        amount: p.amount,
        scheme: p.scheme,
      }),
    );
  }

  /** Binds an `Idempotency-Key` (`idempotencyKey`: its Redis key, scoped to route and payer) to this request and reservation; false when it is bound to another. */
  async claimIdempotencyKey(idempotencyKey: string, requestHash: string, authKey: string, operationId: string): Promise<boolean> {
    const claim = await this.beforeSettlement(authKey, operationId, () =>
      claimIdempotencyKey(this.redis, { idempotencyKey, requestHash, authKey, ttlSeconds: this.retentionSeconds }),
    );
    return claim.claimed;
  }

  /**
   * Compare-and-set of the reservation's state. Retried through a Redis outage up to the outage
   * tolerance (safe: a repeat of an applied transition is a no-op), so a process that settled or
   * ran a paid operation stores its outcome as soon as Redis is back, never leaving the
   * reservation pending until the crash-recovery sweep.
   */
  transition(
    authKey: string,
    operationId: string,
    from: AuthorizationState[],
    to: AuthorizationState,
    fields?: Record<string, string>,
    /** the progress time written (`updated_at` and the in-flight score), unix ms; default now. A held reservation passes the end of its hold. */
    atMs = Date.now(),
  ): Promise<boolean> {
    return retryWhileRedisUnavailable(() =>
      transitionAuthorization(this.redis, {
        authKey,
        inFlightKey: paymentKeys.authorizationsInFlight(this.keys),
        operationId,
        from,
        to,
        nowMs: atMs,
        fields,
      }),
    );
  }

  /** Releases the reservation (nothing was charged), retried through a Redis outage like {@link transition}. */
  release(authKey: string, operationId: string, from: Exclude<AuthorizationState, 'completed'>[]): Promise<boolean> {
    return retryWhileRedisUnavailable(() =>
      releaseAuthorization(this.redis, { authKey, inFlightKey: paymentKeys.authorizationsInFlight(this.keys), operationId, from }),
    );
  }

  /**
   * Unbinds Idempotency-Keys and payment identifiers (`bindingKeys`) that still point to `authKey`,
   * after its payment was refused before it was charged. Best effort: a binding left behind only
   * keeps its key unusable until it expires.
   */
  async unbind(bindingKeys: readonly string[], authKey: string): Promise<void> {
    for (const bindingKey of bindingKeys) {
      await releaseBinding(this.redis, { bindingKey, authKey }).catch((e) =>
        this.log.warn({ err: (e as Error).message?.slice(0, 200) }, 'could not unbind a refused payment'),
      );
    }
  }

  /**
   * Runs a Redis step taken before settlement. When it fails because Redis is unavailable, the
   * reservation may or may not exist: once Redis is back it is released (compare-and-set on this
   * operation id, in the background), so a retry of the payment is not held up; nothing was
   * charged. The error is rethrown (503).
   */
  async beforeSettlement<T>(authKey: string, operationId: string, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (e) {
      if (isRedisUnavailable(e)) {
        void this.release(authKey, operationId, ['pending']).catch((err) =>
          this.log.error({ err: (err as Error).message?.slice(0, 200), operationId }, 'could not release a reservation after a Redis outage'),
        );
      }
      throw e;
    }
  }
}
