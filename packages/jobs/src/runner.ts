import type { RefundQueue } from '@acg/treasury';
import { isRedisUnavailable, REDIS_OUTAGE_TOLERANCE_MS, type RedisKeys } from '@acg/redis';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import { JOB_QUEUE } from './queue.js';
import type { JobStore } from './store.js';
import { inSpan } from '@acg/tracing';
import type { StepExecutor, StoredJob, StoredStep } from './types.js';

/**
 * Told of each job step and each job's end (metrics: `JobMetrics` of @acg/observability). Called
 * synchronously on the runner's path; must not throw or block.
 */
export interface JobObserver {
  /** A step `succeeded` or `failed` (final), was `retried` after a transient failure, or its stored execution was `adopted` after a crash. */
  step(outcome: 'succeeded' | 'failed' | 'retried' | 'adopted'): void;
  /** A job ended with this status (`succeeded`, `failed`, `cancelled`, `budget_exhausted`). */
  jobFinished(status: string): void;
}

export interface JobRunnerOptions {
  connection: Redis;
  keys: RedisKeys;
  store: JobStore;
  executor: StepExecutor;
  refunds: RefundQueue;
  log: Logger;
  /** attempts per step for transient failures (default 4) */
  stepAttempts?: number;
  /** first backoff, ms; doubles each attempt (default 500) */
  backoffMs?: number;
  /** BullMQ lock duration, ms: how soon a crashed worker's job is picked up again (default 30 000) */
  lockDurationMs?: number;
  /** jobs run at once by this worker (default 4) */
  concurrency?: number;
  /**
   * How long a job waits for Redis to come back after losing it mid-job, ms (default
   * REDIS_OUTAGE_TOLERANCE_MS, 30 000). The job then resumes where it stopped; past this
   * bound the job is handed back to BullMQ, which retries it later (still resuming, never failing it).
   */
  redisOutageToleranceMs?: number;
  /** Told of each step and each job's end (metrics). */
  observer?: JobObserver;
  /** called before each step runs (instrumentation and fault-injection in tests) */
  beforeStep?(job: StoredJob, index: number): Promise<void>;
  /** called after a step's execution is stored, before the job record notes it (crash window in tests) */
  afterStep?(job: StoredJob, index: number): Promise<void>;
  /**
   * Reverses the provider credit of a step execution that left no record (`ProviderLedger.reverseCredit`
   * of @acg/provider-ledger; idempotent, `none` when nothing was credited). Called when a resumed step
   * finds no record for its execution id: the execution never ran, or it ran, was credited and was
   * lost before its record was saved (a crash, or a save that failed). The step then runs again under
   * a new execution id, so a provider is never left credited for an execution nobody was charged for.
   */
  reverseCredit?(executionId: string): Promise<unknown>;
  /**
   * Has the budget payment of an ended job paid with x402 `upto` settled (`job.payment.scheme`
   * `upto`; docs/decisions.md "Payment schemes", jobs): records `job.payment.amount` (what its steps
   * spent) as the amount to settle on the payment's reservation and tells the gateways, which hold
   * the facilitator the payer's witness names (the worker's `recordDeferredCharge` of
   * `@acg/payments/commands` and a pub/sub nudge). Idempotent: called again when a job found ended
   * is processed again (after a crash or an outage). Without it an `upto` job is never settled.
   */
  settleDeferred?(job: StoredJob): Promise<void>;
  /**
   * How long before an `upto` payment's deadline (`job.payment.deadline`) the runner stops the job
   * (no further step starts; the job ends `failed` with error `payment_deadline`, charged for what
   * ran), seconds (default {@link UPTO_DEADLINE_MARGIN_SECONDS}): time for a running step to end and
   * for the gateway to settle, with its deferred recovery as the safety net.
   */
  deadlineMarginSeconds?: number;
  /** The clock the deadline is checked against, unix ms (default `Date.now`; tests move it). */
  now?(): number;
}

/**
 * Default {@link JobRunnerOptions.deadlineMarginSeconds}: 300 s, which covers a step's run (capability
 * timeouts are seconds), the gateway's settlement, and one missed nudge (the deferred recovery picks
 * a recorded settlement up after 2 minutes, in rounds of 60 s).
 */
export const UPTO_DEADLINE_MARGIN_SECONDS = 300;

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'budget_exhausted']);
const now = () => new Date().toISOString();

/**
 * The job runner (docs/decisions.md "Jobs"): a BullMQ worker that runs a job's steps in order, each through
 * the same Executor as `POST /api/v1/execute`, paid by an internal debit of the job's budget.
 *
 * Rules: a step starts only if its price fits the remaining budget (else `budget_exhausted`); a
 * transient failure (503/504) is retried with exponential backoff; a failed step costs nothing
 * and fails the job; cancel stops before the next step. Crash safety: a step's execution id is
 * written before it runs, so after a SIGKILL the restarted worker adopts a stored execution
 * instead of running or charging it again; BullMQ hands a stalled job to a live worker. When the
 * job ends, the unspent budget is refunded on-chain by the durable refund queue.
 *
 * Redis outages (docs/decisions.md "Jobs", docs/operating.md "Redis outage tolerance"): an error for which
 * `isRedisUnavailable` holds never fails a step or the job. The runner waits for Redis to answer
 * again, checks it still holds the BullMQ lock (otherwise another worker has the job and this one
 * stops), reloads the stored job and resumes it: a step whose execution was stored is adopted,
 * not run again; a job that ended but whose refund was not yet queued gets it queued.
 */
export function startJobRunner(o: JobRunnerOptions): Worker {
  const attempts = o.stepAttempts ?? 4;
  const backoff = o.backoffMs ?? 500;

  const margin = o.deadlineMarginSeconds ?? UPTO_DEADLINE_MARGIN_SECONDS;
  const settleUpto = async (job: StoredJob) => {
    if (!o.settleDeferred) {
      o.log.error({ job_id: job.job_id }, 'an upto job ended but this runner cannot have it settled (no settleDeferred)');
      return;
    }
    await o.settleDeferred(job);
  };

  const finish = async (job: StoredJob, status: StoredJob['status'], error: StoredJob['error'] = null) => {
    job.status = status;
    job.error = error;
    const left = BigInt(job.budget) - BigInt(job.spent);
    job.result =
      status === 'succeeded' ? { steps: job.steps.map((s) => ({ capability_id: s.capability_id, execution_id: s.execution_id, result: s.result })) } : null;
    if (job.payment.scheme === 'upto') {
      // x402 `upto`: nothing was taken up front, so nothing is refunded; the job settles what its
      // steps spent (0: nothing is ever sent). The record names the amount before it is recorded for settlement
      job.payment.amount = job.spent;
      job.payment.status = BigInt(job.spent) > 0n ? 'settling' : 'not_charged';
      await o.store.save(job);
      await settleUpto(job);
    } else if (left > 0n) {
      job.refund_amount = left.toString();
      await o.store.save(job); // the record names the refund before it is queued
      await o.refunds.enqueue({ operationId: job.job_id, payer: job.payer, amount: left.toString(), paymentTxHash: job.payment.tx_hash as `0x${string}` });
    } else {
      await o.store.save(job);
    }
    o.observer?.jobFinished(status);
    o.log.info({ job_id: job.job_id, status, spent: job.spent, refund: job.refund_amount }, 'job ended');
  };

  const runStep = async (job: StoredJob, step: StoredStep, index: number): Promise<'ok' | 'failed'> => {
    if (step.status === 'running' && step.execution_id) {
      // resumed after a crash: adopt the execution if it completed, never run or charge it twice
      const prior = await o.executor.find(step.execution_id);
      if (prior) {
        o.observer?.step('adopted');
        return settleStep(job, step, prior.status === 'SUCCEEDED', prior.result, prior.error ?? null, prior.proof);
      }
      // no record: whatever the lost execution credited is reversed, and the step runs as a new execution
      const reversed = await o.reverseCredit?.(step.execution_id);
      if (reversed !== undefined && reversed !== 'none')
        o.log.warn({ job_id: job.job_id, execution_id: step.execution_id, reversed }, 'a step execution left no record; its credit was reversed');
      step.execution_id = null;
    }
    for (;;) {
      if (!step.execution_id || step.status !== 'running') {
        step.execution_id = `exe_${ulid()}`;
        step.status = 'running';
        step.started_at ??= now();
      }
      step.attempts += 1;
      job.status = 'running';
      await o.store.save(job);
      await o.beforeStep?.(job, index);
      const out = await o.executor.run(step.execution_id, step.capability_id, step.input, {
        // a job is paid by a settled transfer (never an off-chain voucher): its hash is always there
        tx_hash: job.payment.tx_hash ?? '0x',
        amount: step.price,
        job_id: job.job_id,
        payer: job.payer,
      });
      await o.afterStep?.(job, index);
      if (out.status === 'SUCCEEDED') return settleStep(job, step, true, out.result, null, out.proof);
      if (out.transient && step.attempts < attempts && !(await o.store.cancelRequested(job.job_id))) {
        o.observer?.step('retried');
        o.log.warn({ job_id: job.job_id, step: index, attempt: step.attempts, code: out.error?.code }, 'transient step failure; retrying');
        step.execution_id = null; // the failed execution is recorded; the retry is a new execution
        step.status = 'pending';
        await o.store.save(job);
        await new Promise((r) => setTimeout(r, backoff * 2 ** (step.attempts - 1)));
        continue;
      }
      return settleStep(job, step, false, null, out.error ?? { code: 'failed', message: 'The step failed.' });
    }
  };

  const settleStep = async (job: StoredJob, step: StoredStep, ok: boolean, result: StoredStep['result'], error: StoredStep['error'], proof?: string) => {
    step.status = ok ? 'succeeded' : 'failed';
    step.finished_at = now();
    step.result = result;
    step.error = error;
    if (ok && proof) step.proof = proof;
    step.cost = ok ? step.price : '0';
    if (ok) job.spent = (BigInt(job.spent) + BigInt(step.price)).toString();
    await o.store.save(job);
    o.observer?.step(ok ? 'succeeded' : 'failed');
    return ok ? ('ok' as const) : ('failed' as const);
  };

  const processOnce = async (bull: Job<{ job_id: string }>) => {
    const job = await o.store.get(bull.data.job_id);
    if (!job) return;
    if (TERMINAL.has(job.status)) {
      // ended before an outage or a crash could record its settlement: recorded now (idempotent)
      if (job.payment.scheme === 'upto') return settleUpto(job);
      // ended before an outage or a crash could queue its refund: queue it now (idempotent by job id)
      if (job.refund_amount) {
        await o.refunds.enqueue({ operationId: job.job_id, payer: job.payer, amount: job.refund_amount, paymentTxHash: job.payment.tx_hash as `0x${string}` });
      }
      return;
    }
    for (let i = 0; i < job.steps.length; i++) {
      const step = job.steps[i];
      if (step.status === 'succeeded' || step.status === 'skipped') continue;
      if (step.status === 'failed') return finish(job, 'failed', step.error);
      if (step.status !== 'running' && (await o.store.cancelRequested(job.job_id))) {
        for (const s of job.steps.slice(i)) s.status = 'skipped';
        return finish(job, 'cancelled');
      }
      // an `upto` payment can be settled only until its deadline: the job ends before it, charged for what ran
      const deadline = job.payment.scheme === 'upto' ? job.payment.deadline : undefined;
      if (step.status !== 'running' && deadline !== undefined && (o.now?.() ?? Date.now()) / 1000 >= deadline - margin) {
        for (const s of job.steps.slice(i)) s.status = 'skipped';
        return finish(job, 'failed', {
          code: 'payment_deadline',
          message: `Step ${i + 1} was not started: the job's upto payment can be settled only until ${new Date(deadline * 1000).toISOString()}, so the job ended ${margin} s before, charged for the steps that ran.`,
        });
      }
      if (step.status !== 'running' && BigInt(job.spent) + BigInt(step.price) > BigInt(job.budget)) {
        for (const s of job.steps.slice(i)) s.status = 'skipped';
        return finish(job, 'budget_exhausted', { code: 'budget_exhausted', message: `Step ${i + 1} costs more than the remaining budget.` });
      }
      // span `job.step` (a root span: jobs run apart from the request that paid them), the parent of the step's `execute`
      const r = await inSpan(
        '@acg/jobs',
        'job.step',
        { 'acg.job_id': job.job_id, 'acg.step_index': i, 'acg.capability_id': step.capability_id },
        async (span) => {
          const outcome = await runStep(job, step, i);
          span.setAttributes({ 'acg.step_status': step.status, 'acg.step_attempts': step.attempts });
          return outcome;
        },
        { root: true },
      );
      if (r === 'failed') {
        for (const s of job.steps.slice(i + 1)) s.status = 'skipped';
        return finish(job, 'failed', step.error);
      }
    }
    return finish(job, 'succeeded');
  };

  const tolerance = o.redisOutageToleranceMs ?? REDIS_OUTAGE_TOLERANCE_MS;
  const lockDuration = o.lockDurationMs ?? 30_000;
  const process = async (bull: Job<{ job_id: string }>, token?: string) => {
    for (;;) {
      try {
        return await processOnce(bull);
      } catch (e) {
        if (!isRedisUnavailable(e)) throw e;
        o.log.warn({ job_id: bull.data.job_id, err: String((e as Error).message).slice(0, 200) }, 'redis unavailable mid-job; resuming once it is back');
        await o.store.waitUntilAvailable(tolerance); // rethrows past the tolerance: BullMQ retries the job later
        if (token && (await bull.extendLock(token, lockDuration)) !== 1) {
          o.log.warn({ job_id: bull.data.job_id }, 'lost the job lock during the redis outage; another worker resumes it');
          throw new Error('job lock lost during a Redis outage');
        }
      }
    }
  };

  const worker = new Worker<{ job_id: string }>(JOB_QUEUE, process, {
    connection: o.connection,
    prefix: o.keys.bullPrefix(),
    concurrency: o.concurrency ?? 4,
    lockDuration: o.lockDurationMs ?? 30_000,
    stalledInterval: Math.max(1000, Math.floor((o.lockDurationMs ?? 30_000) / 2)),
    maxStalledCount: 1000,
  });
  worker.on('failed', (job, err) => o.log.error({ job_id: job?.data.job_id, err: err.message.slice(0, 200) }, 'job processing error; will retry'));
  worker.on('error', (err) => o.log.warn({ err: String(err?.message ?? err).slice(0, 200) }, 'job worker error (e.g. Redis unavailable); it reconnects'));
  return worker;
}
