import { isRedisUnavailable, retryWhileRedisUnavailable } from '@acg/redis';
import { CapabilityFailure, HANDLERS } from './capabilities/index.js';
import type { ExecutionRecord } from './executions.js';
import type { Services } from './services.js';

/** What paid for an execution: an x402 settlement, or a job's budget (internal debit). */
export interface ExecutionCharge {
  /** settlement tx hash (x402) or the job's budget payment tx hash */
  tx_hash: string;
  /** integer string, USDC base units */
  amount: string;
  /** set when a job step pays from its budget */
  job_id?: string;
  payer: string;
}

/** Result of {@link Executor.run}: the stored record, and the failure when it failed. */
export interface ExecutionOutcome {
  record: ExecutionRecord;
  failure?: CapabilityFailure;
}

/**
 * Runs a capability once and records it: the one execution path shared by `POST /api/v1/execute`
 * and job steps (issue 3: "each step through the same execution code"). Validates the input
 * against the capability's schema, runs the handler, validates the output, saves the execution
 * record (`exe_...`) and a latency sample. Never throws for a capability failure: the outcome
 * carries it (code, safe message, HTTP status, and whether it is transient: 503/504). Throws a
 * Redis error (see `isRedisUnavailable`) when Redis is unavailable while the capability runs, or
 * for longer than the outage tolerance while its record is saved.
 */
export class Executor {
  constructor(private readonly services: Pick<Services, 'executions' | 'telemetry' | 'log' | 'capabilityDeps'>) {}

  async run(executionId: string, capabilityId: string, rawInput: unknown, charge: ExecutionCharge): Promise<ExecutionOutcome> {
    const { log, capabilityDeps } = this.services;
    const created_at = new Date().toISOString();
    const started = performance.now();
    const base = {
      execution_id: executionId,
      capability_id: capabilityId,
      payment: { tx_hash: charge.tx_hash, amount: charge.amount },
      ...(charge.job_id ? { job_id: charge.job_id } : {}),
      created_at,
    };
    let result: Record<string, unknown>;
    try {
      const handler = HANDLERS.get(capabilityId);
      if (!handler) throw new CapabilityFailure('not_executable', `The capability "${capabilityId}" is not executable here.`, 422);
      const parsed = handler.input.safeParse(rawInput);
      if (!parsed.success) throw new CapabilityFailure('invalid_input', `The input does not match the input_schema of "${capabilityId}".`, 400);
      result = handler.output.parse(await handler.run(parsed.data, capabilityDeps, { executionId, payer: charge.payer, paymentTxHash: charge.tx_hash })) as Record<string, unknown>;
    } catch (e) {
      // Redis unavailable is not the capability's failure: nothing is recorded and the caller
      // answers 503 (a paid request, refunded) or resumes the step once Redis is back (a job).
      if (isRedisUnavailable(e)) throw e;
      const failure = e instanceof CapabilityFailure ? e : new CapabilityFailure('internal_error', 'The capability failed unexpectedly; the error was logged.', 500, e);
      const duration_ms = performance.now() - started;
      const error = { code: failure.code, message: failure.message };
      const record: ExecutionRecord = { ...base, status: 'FAILED', result: null, error, finished_at: new Date().toISOString(), duration_ms };
      await this.store(record);
      log.warn(
        { execution_id: executionId, capability_id: capabilityId, job_id: charge.job_id, code: failure.code, cause: String((failure.cause as Error)?.message ?? '').slice(0, 200) },
        'execution failed',
      );
      return { record, failure };
    }
    const duration_ms = performance.now() - started;
    const record: ExecutionRecord = { ...base, status: 'SUCCEEDED', result, finished_at: new Date().toISOString(), duration_ms };
    await this.store(record);
    log.info({ execution_id: executionId, capability_id: capabilityId, job_id: charge.job_id, duration_ms: Math.round(duration_ms), payer: charge.payer }, 'execution succeeded');
    return { record };
  }

  /**
   * Saves the record, retrying through a Redis outage up to the outage tolerance (the capability
   * already ran: its record must not be lost to a blip), then a latency sample (best effort).
   * Throws the Redis error when Redis stays unavailable longer.
   */
  private async store(record: ExecutionRecord): Promise<void> {
    const { executions, telemetry } = this.services;
    await retryWhileRedisUnavailable(() => executions.save(record));
    await telemetry.record(record.capability_id, record.duration_ms, record.status === 'SUCCEEDED').catch(() => undefined);
  }
}

/** A failure worth retrying (the upstream or chain was unavailable or timed out). */
export function isTransient(failure: CapabilityFailure): boolean {
  return failure.status === 503 || failure.status === 504;
}
