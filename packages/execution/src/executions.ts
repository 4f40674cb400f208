import { readRefund } from '@acg/payments';
import type { ExecutionRecord } from '@acg/schemas';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';

/** A stored execution (SPEC 2.7 + DESIGN): what `GET /api/v1/executions/{id}` returns; schema `ExecutionRecord` of `@acg/schemas`. */
export type { ExecutionRecord };

/** `exe_` + ULID (DESIGN "x402 payments"). */
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
