import { readRefund } from '@acg/treasury';
import type { ExecutionRecord } from '@acg/schemas';
import type { RedisKeys } from '@acg/redis';
import { randomFillSync } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import { ulid } from 'ulid';

/** A stored execution (docs/spec-notes.md 2.7 + docs/decisions.md): what `GET /api/v1/executions/{id}` returns; schema `ExecutionRecord` of `@acg/schemas`. */
export type { ExecutionRecord };

/** Random bytes for ULIDs, drawn from the OS CSPRNG 1 KiB at a time. */
const pool = new Uint8Array(1024);
let used = pool.length;

/**
 * A random fraction in [0, 1) from one CSPRNG byte (byte / 256), what `ulid`'s own generator
 * returns, but from {@link pool}: `ulid` asks its generator once per character (16 per id), and its
 * default makes a `getRandomValues` call each time, about 0.5 ms of CPU per id in the gateway's
 * profile, on every paid request (bench/README.md "Paid execute").
 */
function pooledRandom(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++] / 256;
}

/** `exe_` + ULID (docs/decisions.md "x402 payments"). */
export function newExecutionId(): string {
  return `exe_${ulid(undefined, pooledRandom)}`;
}

/** Execution records in Redis, kept 30 days; refunds are merged in when read. */
export class ExecutionStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly ttlSeconds = 30 * 24 * 3600,
  ) {}

  /**
   * Stores `record` (SET with the store's TTL). With `also` (e.g. `Telemetry.sample`: the run's latency
   * sample), its commands go in the same MULTI, one round trip; they are best effort: only the
   * record's own error is thrown.
   */
  async save(record: ExecutionRecord, also?: (multi: ChainableCommander) => ChainableCommander): Promise<void> {
    const key = this.keys.execution(record.execution_id);
    if (!also) {
      await this.redis.set(key, JSON.stringify(record), 'EX', this.ttlSeconds);
      return;
    }
    const results = await also(this.redis.multi().set(key, JSON.stringify(record), 'EX', this.ttlSeconds)).exec();
    const saved = results?.[0];
    if (!saved) throw new Error(`execution record ${record.execution_id}: the MULTI was discarded`);
    if (saved[0]) throw saved[0];
  }

  /** The record with its current refund state, or undefined for an unknown id. */
  async get(id: string): Promise<ExecutionRecord | undefined> {
    const raw = await this.redis.get(this.keys.execution(id));
    if (!raw) return undefined;
    const record = JSON.parse(raw) as ExecutionRecord;
    // a failed execution's refund, or the refund a routed success owes (its intent stored with the record)
    if (record.status === 'FAILED' || record.refund) {
      const refund = await readRefund(this.redis, this.keys, id);
      if (refund) record.refund = refund;
    }
    return record;
  }
}

/**
 * The success answer of an execution whose SUCCEEDED record was stored but whose paid answer was
 * not (the process died in between): `{status: 200, body: {execution_id, status: "SUCCEEDED",
 * result, payment, proof?, provider?, attempts?, refund?}}`, the body `POST /api/v1/execute`
 * answers (a routed call names its `provider` and `attempts`, and `refund` is the part of the
 * payment above the answering offer's price, in its current state), plus `refundAmount` when the
 * record owes that refund (integer USDC base units), which the sweep queues (once per execution
 * id) before completing the payment. Undefined for any other id, a missing record or one that did
 * not succeed. The payment recovery sweep completes such a payment with it instead of refunding
 * (`finishedAnswer` of @acg/payments).
 */
export async function succeededExecutionAnswer(
  store: Pick<ExecutionStore, 'get'>,
  operationId: string,
): Promise<{ status: number; headers: Record<string, string>; body: unknown; refundAmount?: string } | undefined> {
  if (!operationId.startsWith('exe_')) return undefined;
  const record = await store.get(operationId);
  if (record?.status !== 'SUCCEEDED' || record.result === undefined) return undefined;
  const refund = record.refund
    ? { status: record.refund.status, amount: record.refund.amount, ...(record.refund.tx_hash ? { tx_hash: record.refund.tx_hash } : {}) }
    : undefined;
  return {
    status: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
    body: {
      execution_id: record.execution_id,
      status: 'SUCCEEDED',
      result: record.result,
      payment: record.payment,
      ...(record.proof ? { proof: record.proof } : {}),
      ...(record.provider ? { provider: record.provider } : {}),
      ...(record.attempts ? { attempts: record.attempts } : {}),
      ...(refund ? { refund } : {}),
    },
    ...(record.refund ? { refundAmount: record.refund.amount } : {}),
  };
}
