import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { PaymentConflictError, PaymentInProgressError } from './errors.js';
import { conflictAnswer, type StoredResponse, withRefundState } from '@acg/treasury';

export type { StoredResponse };

/**
 * Stored answers (docs/decisions.md "x402 payments"): a replayed payment or `Idempotency-Key` gets the
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
   * The binding of an `Idempotency-Key` (`idempotencyKey`: its Redis key, scoped to route and payer),
   * undefined when the key is new: the reservation it names (`authKey`). Throws
   * PaymentConflictError('idempotency') when the key was used with another request.
   */
  async byIdempotencyKey(idempotencyKey: string, requestHash: string): Promise<{ authKey: string } | undefined> {
    const [hash, authKey] = await this.redis.hmget(idempotencyKey, 'request_hash', 'authorization_key');
    if (!hash || !authKey) return undefined;
    if (hash !== requestHash) throw new PaymentConflictError('idempotency');
    return { authKey };
  }

  /**
   * The receipt of a settled payment resent without proof of being its payer (README "x402
   * payments": replays): 409 `payment_already_used` with the operation's id fields, the payment
   * (`tx_hash`, `amount`) and where its payer reads the result; never the result or the proof.
   * The reservation `authKey` must exist (throws PaymentInProgressError otherwise).
   */
  async receipt(authKey: string, resourceUrl: string): Promise<StoredResponse> {
    const [operationId, txHash, amount] = await this.redis.hmget(authKey, 'operation_id', 'tx_hash', 'amount');
    if (!operationId) throw new PaymentInProgressError();
    const base = resourceUrl.replace(/^(https?:\/\/[^/]+).*$/, '$1');
    const read = resultLocation(operationId);
    return conflictAnswer({
      reason: 'payment_already_used',
      detail: `This payment was used already. Its result goes only to its payer: resend it with the payment-identifier it was first sent with, or with the payer's bearer token${read ? `, or read ${read.method} ${read.path} with that token` : ''}.`,
      operation_id: operationId,
      ...(operationId.startsWith('exe_') ? { execution_id: operationId } : {}),
      ...(operationId.startsWith('job_') ? { job_id: operationId } : {}),
      // a batch-settlement voucher moved nothing on chain: its reservation's `0x` is no transaction (null)
      payment: { tx_hash: txHash && txHash !== '0x' ? txHash : null, amount: amount ?? null },
      ...(read ? { result_url: `${base}${read.path}` } : {}),
    });
  }

  /**
   * The stored answer of the reservation `authKey`, polling every 50 ms while it runs: once it is
   * `completed`, or as soon as an answer is stored with it (a job paid with `upto` is answered
   * before it is settled: `Outcome.settleLater`). Throws PaymentInProgressError when it is
   * released, or still running after the wait.
   */
  async waitForStored(authKey: string): Promise<StoredResponse> {
    const deadline = Date.now() + this.duplicateWaitMs;
    for (;;) {
      const [state, response, operationId] = await this.redis.hmget(authKey, 'state', 'response', 'operation_id');
      if (state && response) return withRefundState(this.redis, this.keys, operationId, JSON.parse(response) as StoredResponse);
      if (!state) throw new PaymentInProgressError();
      if (Date.now() > deadline) throw new PaymentInProgressError();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Where the payer of operation `id` reads its outcome with its bearer token, by the id's prefix. */
function resultLocation(id: string): { method: 'GET'; path: string } | undefined {
  if (id.startsWith('exe_')) return { method: 'GET', path: `/api/v1/executions/${id}` };
  if (id.startsWith('job_')) return { method: 'GET', path: `/api/v1/jobs/${id}` };
  if (id.startsWith('dep_')) return { method: 'GET', path: '/v1/account' };
  return undefined;
}
