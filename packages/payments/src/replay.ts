import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { PaymentConflictError, PaymentInProgressError } from './errors.js';
import { withRefundState } from './refunds.js';

/** An answer stored with its reservation (status, body, headers), returned to every replay. */
export interface StoredResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * Stored answers (DESIGN "x402 payments"): a replayed payment or `Idempotency-Key` gets the
 * response stored when the first request completed, with the refund's current state read
 * through; a duplicate arriving while the first one runs waits for it (up to `duplicateWaitMs`).
 */
export class Replays {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly duplicateWaitMs = 30_000,
  ) {}

  /**
   * The stored answer of the request that used `Idempotency-Key` `key` on `route`, undefined when
   * the key is new. Throws PaymentConflictError('idempotency') when the key was used with another
   * request, PaymentInProgressError when that request has not finished within the wait.
   */
  async byIdempotencyKey(route: string, key: string, requestHash: string): Promise<StoredResponse | undefined> {
    const [hash, authKey] = await this.redis.hmget(this.keys.idempotency(route, key), 'request_hash', 'authorization_key');
    if (!hash) return undefined;
    if (hash !== requestHash) throw new PaymentConflictError('idempotency');
    return this.waitForStored(authKey!);
  }

  /**
   * The stored answer of the reservation `authKey`, polling every 50 ms while it runs.
   * Throws PaymentInProgressError when it is released, or still running after the wait.
   */
  async waitForStored(authKey: string): Promise<StoredResponse> {
    const deadline = Date.now() + this.duplicateWaitMs;
    for (;;) {
      const [state, response, operationId] = await this.redis.hmget(authKey, 'state', 'response', 'operation_id');
      if (state === 'completed' && response) return withRefundState(this.redis, this.keys, operationId, JSON.parse(response) as StoredResponse);
      if (!state) throw new PaymentInProgressError();
      if (Date.now() > deadline) throw new PaymentInProgressError();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
