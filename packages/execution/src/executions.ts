import { readRefund } from '@acg/payments';
import type { ExecutionRecord } from '@acg/schemas';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';

/** A stored execution (docs/spec-notes.md 2.7 + docs/decisions.md): what `GET /api/v1/executions/{id}` returns; schema `ExecutionRecord` of `@acg/schemas`. */
export type { ExecutionRecord };

/** `exe_` + ULID (docs/decisions.md "x402 payments"). */
export function newExecutionId(): string {
  return `exe_${ulid()}`;
}

/** Execution records in Redis, kept 30 days; refunds are merged in when read. */
export class ExecutionStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly ttlSeconds = 30 * 24 * 3600,
  ) {}

  async save(record: ExecutionRecord): Promise<void> {
    await this.redis.set(this.keys.execution(record.execution_id), JSON.stringify(record), 'EX', this.ttlSeconds);
  }

  /** The record with its current refund state, or undefined for an unknown id. */
  async get(id: string): Promise<ExecutionRecord | undefined> {
    const raw = await this.redis.get(this.keys.execution(id));
    if (!raw) return undefined;
    const record = JSON.parse(raw) as ExecutionRecord;
    if (record.status === 'FAILED') {
      const refund = await readRefund(this.redis, this.keys, id);
      if (refund) record.refund = refund;
    }
    return record;
  }
}

/**
 * The success answer of an execution whose SUCCEEDED record was stored but whose paid answer was
 * not (the process died in between): `{status: 200, body: {execution_id, status: "SUCCEEDED",
 * result, payment, proof?}}`, the body `POST /api/v1/execute` answers; undefined for any other
 * id, a missing record or one that did not succeed. The payment recovery sweep completes such a
 * payment with it instead of refunding (`finishedAnswer` of @acg/payments).
 */
export async function succeededExecutionAnswer(
  store: Pick<ExecutionStore, 'get'>,
  operationId: string,
): Promise<{ status: number; headers: Record<string, string>; body: unknown } | undefined> {
  if (!operationId.startsWith('exe_')) return undefined;
  const record = await store.get(operationId);
  if (record?.status !== 'SUCCEEDED' || record.result === undefined) return undefined;
  return {
    status: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
    body: {
      execution_id: record.execution_id,
      status: 'SUCCEEDED',
      result: record.result,
      payment: record.payment,
      ...(record.proof ? { proof: record.proof } : {}),
    },
  };
}
