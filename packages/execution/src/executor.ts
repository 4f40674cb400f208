import { CapabilityFailure, type CallEvidence, type CapabilityCatalog, type CapabilityDeps, type ShareEarnings } from '@acg/capabilities';
import { isRedisUnavailable, retryWhileRedisUnavailable } from '@acg/redis';
import type { Logger } from 'pino';
import type { ExecutionRecord, ExecutionStore } from './executions.js';
import { resolveCapability, type ResolvedCapability } from './resolve.js';
import type { Telemetry } from './telemetry.js';
import { inSpan } from '@acg/tracing';

/** What a proof is signed over (the `ProofSubject` of @acg/receipts, structurally). */
export interface ProofSubject {
  execution_id: string;
  capability_id: string;
  input: unknown;
  result: unknown;
  payment: { payer: string; tx_hash: string; amount: string };
  /** the provider's name, or for an offered capability the answering provider `{provider_id, name}` (docs/marketplace.md) */
  provider?: string | { provider_id: string; name: string } | null;
}

/** What paid for an execution: an x402 settlement, or a job's budget (internal debit). */
export interface ExecutionCharge {
  /** settlement tx hash (x402) or the job's budget payment tx hash; `0x` for an off-chain batch-settlement voucher */
  tx_hash: string;
  /** integer string, USDC base units */
  amount: string;
  /** set when a job step pays from its budget */
  job_id?: string;
  payer: string;
  /**
   * A deferred payment (x402 `upto`, docs/decisions.md "Payment schemes"): settles what the call
   * used once it succeeded and before its record is written: `price`, the answering offer's price
   * (undefined: the capability's own price, the whole authorized `amount`). Resolves with the
   * settlement's transaction and amount, which become the record's `payment`; no `refund` intent is
   * written (nothing above the price was taken). Throws when the settlement is refused: the call
   * then fails after its credit (the paywall reverses it). A failed call settles nothing: its
   * record's payment is the zero hash and amount "0" ({@link NOT_SETTLED_TX_HASH}).
   */
  settle?: (price: bigint | undefined) => Promise<{ tx_hash: string; amount: string }>;
  /**
   * Where a provider's share of this call goes instead of the provider ledger (`CapabilityCall.earnings`):
   * a call paid by an x402 `batch-settlement` voucher records it against the voucher's channel, credited
   * only once the voucher is claimed and settled (docs/decisions.md "batch-settlement").
   */
  earnings?: ShareEarnings;
}

/** The `payment.tx_hash` of an execution whose deferred payment settled nothing (a failed `upto` call): no transaction. */
export const NOT_SETTLED_TX_HASH = `0x${'0'.repeat(64)}`;

/**
 * A read-only capability's run started before its payment settled ({@link Executor.startEarly}):
 * its result (or failure) and when it started and ended (`performance.now()` ms), so the
 * recorded duration is the run's own time.
 */
export interface EarlyRun {
  readonly outcome: Promise<{ ok: true; value: unknown; endedAt: number } | { ok: false; error: unknown; endedAt: number }>;
  readonly startedAt: number;
}

/** Result of {@link Executor.run}: the stored record, and the failure when it failed. */
export interface ExecutionOutcome {
  record: ExecutionRecord;
  failure?: CapabilityFailure;
  /** The answering offer's price when it differs from the definition's (USDC base units; docs/marketplace.md "Money"). */
  price?: bigint;
}

/**
 * Told of every execution recorded (metrics: `ExecutionMetrics` of @acg/observability). Called
 * synchronously once the record is saved; must not throw or block.
 */
export interface ExecutionObserver {
  /** `capability_id` is a served definition's id, or `unknown` for an id no definition has; `duration_ms` is the run time. */
  executed(e: { capability_id: string; status: 'SUCCEEDED' | 'FAILED'; code?: string; duration_ms: number }): void;
}

/** What an {@link Executor} uses: where records and latency samples go, the definitions, and what `run` may use. */
export interface ExecutorDeps {
  executions: Pick<ExecutionStore, 'save'>;
  telemetry: Pick<Telemetry, 'record'> & Partial<Pick<Telemetry, 'sample'>>;
  log: Pick<Logger, 'info' | 'warn'>;
  /** Chain clients and Redis handed to `precondition` and `run`. */
  capabilityDeps: CapabilityDeps;
  /** Signs a JWS proof of every SUCCEEDED result (`ProofSigner` of @acg/receipts); without it records carry no proof. */
  proofs?: { sign(s: ProofSubject): Promise<string> };
  /** Every definition this deployment serves now (built-ins, added ones, providers'); {@link Executor.runInput} resolves among them. */
  catalog: Pick<CapabilityCatalog, 'list'>;
  /** Told of each execution recorded (metrics). */
  executionObserver?: ExecutionObserver;
}

/**
 * Runs a capability once and records it: the one execution path shared by `POST /api/v1/execute`
 * and job steps. {@link run} takes a capability already resolved by {@link resolveCapability}
 * (input parsed once, before payment); {@link runInput} starts from raw input (a job step read
 * back from its record). Each runs `run`, validates the output, saves the execution record
 * (`exe_...`) and a latency sample. Never throws for a capability failure: the outcome carries it
 * (code, safe message, HTTP status; transient when 503/504, see {@link isTransient}). Throws a
 * Redis error (see `isRedisUnavailable` in @acg/redis) when Redis is unavailable while the
 * capability runs, or for longer than the outage tolerance while its record is saved.
 */
export class Executor {
  constructor(private readonly deps: ExecutorDeps) {}

  /**
   * Starts a `readOnly` capability's `run` before its payment settled (docs/decisions.md "x402 payments":
   * the payment is verified and reserved for this request, so it starts at most once per
   * payment); undefined for any other capability. Hand the result to {@link run}, which records
   * it only once the payment settled; a run never handed over is simply dropped (nothing is
   * stored, nothing charged).
   */
  startEarly(resolved: Pick<ResolvedCapability, 'definition' | 'input'>, call: { executionId: string; payer: string }): EarlyRun | undefined {
    const { definition, input } = resolved;
    if (!definition.readOnly || definition.provider) return undefined;
    const startedAt = performance.now();
    const outcome = Promise.resolve()
      .then(() =>
        definition.run(input, this.deps.capabilityDeps, {
          executionId: call.executionId,
          payer: call.payer,
          paymentTxHash: '',
          amount: '0',
          attach: () => undefined,
        }),
      )
      .then(
        (value) => ({ ok: true as const, value, endedAt: performance.now() }),
        (error: unknown) => ({ ok: false as const, error, endedAt: performance.now() }),
      );
    return { outcome, startedAt };
  }

  /**
   * Runs `resolved.definition` with its already-parsed `resolved.input`, paid by `charge`; with
   * `early` (from {@link startEarly}), records that run's result instead of running again, unless
   * the early run failed: then it runs once more now that the payment settled, and that run's
   * outcome is recorded (issue 28: a failure refunded costs a second transaction).
   */
  async run(
    executionId: string,
    resolved: Pick<ResolvedCapability, 'definition' | 'input'> & { rawInput?: unknown; route?: readonly string[] },
    charge: ExecutionCharge,
    early?: EarlyRun,
  ): Promise<ExecutionOutcome> {
    const { definition, input } = resolved;
    const route = resolved.route ? { route: resolved.route } : {};
    const evidence: Evidence = {};
    if (early) {
      let retriedEndedAt: number | undefined;
      return this.record({
        executionId,
        capabilityId: definition.id,
        charge,
        proofOf: { input: resolved.rawInput ?? input, provider: definition.provider ?? null, evidence },
        run: async () => {
          const r = await early.outcome;
          if (r.ok) return definition.output.parse(r.value) as Record<string, unknown>;
          // The early run failed (e.g. the chain was down while the payment settled). The payment
          // has settled now: run it once more, as a call that did not start early would, before a
          // failure is recorded and refunded (a refund costs a second transaction). Read-only, so safe to repeat.
          try {
            return definition.output.parse(
              await definition.run(input, this.deps.capabilityDeps, {
                executionId,
                payer: charge.payer,
                paymentTxHash: charge.tx_hash,
                amount: charge.amount,
                ...(charge.earnings ? { earnings: charge.earnings } : {}),
                attach: (e) => Object.assign(evidence, e),
              }),
            ) as Record<string, unknown>;
          } finally {
            retriedEndedAt = performance.now();
          }
        },
        timing: { startedAt: early.startedAt, endedAt: async () => retriedEndedAt ?? (await early.outcome).endedAt },
      });
    }
    return this.record({
      executionId,
      capabilityId: definition.id,
      charge,
      proofOf: { input: resolved.rawInput ?? input, provider: definition.provider ?? null, evidence },
      run: async () =>
        definition.output.parse(
          await definition.run(input, this.deps.capabilityDeps, {
            executionId,
            payer: charge.payer,
            // read when used: a deferred (`upto`) payment's settlement is known only after the run,
            // and the provider's credit (run then) must name it (recordOnce sets it)
            get paymentTxHash() {
              return charge.tx_hash;
            },
            amount: charge.amount,
            ...(charge.job_id ? { jobId: charge.job_id } : {}),
            ...(charge.earnings ? { earnings: charge.earnings } : {}),
            ...route,
            attach: (e) => Object.assign(evidence, e),
          }),
        ) as Record<string, unknown>,
    });
  }

  /**
   * Resolves `capabilityId` and parses `rawInput` (as {@link resolveCapability}), then runs it.
   * A capability that cannot run is recorded as FAILED with its code (`unknown_capability`,
   * `not_executable`, `invalid_input`, `precondition_unmet`) and status (404/422/400).
   */
  async runInput(executionId: string, capabilityId: string, rawInput: unknown, charge: ExecutionCharge): Promise<ExecutionOutcome> {
    const resolved = resolveCapability(this.deps.catalog.list(), capabilityId, rawInput, this.deps.capabilityDeps);
    if (!resolved.ok) {
      const { error } = resolved;
      return this.record({
        executionId,
        capabilityId,
        charge,
        run: () => Promise.reject(new CapabilityFailure(error.code, error.shortMessage, error.status)),
      });
    }
    return this.run(executionId, resolved, charge);
  }

  /** Runs and records one execution inside the span `execute` (its parent: the request's `paywall`, or a job's `job.step`). */
  private record(recording: Recording): Promise<ExecutionOutcome> {
    const { executionId, capabilityId, charge } = recording;
    const attributes = { 'acg.execution_id': executionId, 'acg.capability_id': capabilityId, ...(charge.job_id ? { 'acg.job_id': charge.job_id } : {}) };
    return inSpan('@acg/execution', 'execute', attributes, async (span) => {
      const outcome = await this.recordOnce(recording);
      span.setAttribute('acg.execution_status', outcome.record.status);
      if (outcome.failure) span.setAttribute('acg.error_code', outcome.failure.code);
      return outcome;
    });
  }

  private async recordOnce({ executionId, capabilityId, charge, proofOf, run, timing }: Recording): Promise<ExecutionOutcome> {
    const { log } = this.deps;
    const created_at = new Date().toISOString();
    const started = timing?.startedAt ?? performance.now();
    const runTime = async () => (timing ? await timing.endedAt() : performance.now()) - started;
    const base = {
      execution_id: executionId,
      capability_id: capabilityId,
      // a deferred payment is settled only on success (below): until then, nothing was charged;
      // no transaction behind an off-chain batch-settlement voucher (`0x`): no `tx_hash`
      payment: charge.settle
        ? { tx_hash: NOT_SETTLED_TX_HASH, amount: '0' }
        : { ...(charge.tx_hash !== '0x' ? { tx_hash: charge.tx_hash } : {}), amount: charge.amount },
      ...(charge.job_id ? { job_id: charge.job_id } : {}),
      payer: charge.payer,
      created_at,
    };
    let result: Record<string, unknown>;
    try {
      result = await run();
    } catch (e) {
      // Redis unavailable is not the capability's failure: nothing is recorded and the caller
      // answers 503 (a paid request, refunded) or resumes the step once Redis is back (a job).
      if (isRedisUnavailable(e)) throw e;
      const failure =
        e instanceof CapabilityFailure ? e : new CapabilityFailure('internal_error', 'The capability failed unexpectedly; the error was logged.', 500, e);
      const duration_ms = await runTime();
      const error = { code: failure.code, message: failure.message };
      const attempts = proofOf?.evidence?.attempts;
      const record: ExecutionRecord = {
        ...base,
        status: 'FAILED',
        result: null,
        error,
        ...(attempts ? { attempts } : {}),
        finished_at: new Date().toISOString(),
        duration_ms,
      };
      await this.store(record);
      this.observe(record, failure.code);
      log.warn(
        {
          execution_id: executionId,
          capability_id: capabilityId,
          job_id: charge.job_id,
          code: failure.code,
          cause: String((failure.cause as Error)?.message ?? '').slice(0, 200),
        },
        'execution failed',
      );
      return { record, failure };
    }
    const duration_ms = await runTime();
    // a deferred payment settles what was used (the answering offer's price) before the proof names it
    const settled = charge.settle ? await charge.settle(proofOf?.evidence?.price) : undefined;
    const paid = settled ? { tx_hash: settled.tx_hash || NOT_SETTLED_TX_HASH, amount: settled.amount } : { tx_hash: charge.tx_hash, amount: charge.amount };
    // the call's credit (below) names the transaction that paid it: the settlement, for a deferred payment
    if (settled) charge.tx_hash = paid.tx_hash;
    // no transaction behind an off-chain batch-settlement voucher (`0x`): the record names none
    const recorded = paid.tx_hash === '0x' ? { amount: paid.amount } : paid;
    const proof =
      proofOf && this.deps.proofs
        ? await this.deps.proofs.sign({
            execution_id: executionId,
            capability_id: capabilityId,
            input: proofOf.input,
            result,
            payment: { payer: charge.payer, ...paid },
            provider: proofOf.evidence?.provider ?? proofOf.provider,
          })
        : undefined;
    // everything that can throw is done (output parsed, proof canonicalized and signed): the
    // call's credit (a provider's share) goes now, before the record; a failure from here on is
    // refunded by the paywall, which reverses this credit in the same decision
    await proofOf?.evidence?.credit?.();
    // a routed call paid the route's highest price: the rest is owed back, and that intent is
    // written with the SUCCEEDED record itself, so a crash before the refund is queued cannot lose
    // it (the recovery sweep queues it from the record; issue 33)
    const price = proofOf?.evidence?.price;
    // (a deferred payment settled only what was used: nothing is owed back)
    const above = price === undefined || charge.job_id || settled ? 0n : BigInt(charge.amount) - price;
    const record: ExecutionRecord = {
      ...base,
      payment: recorded,
      status: 'SUCCEEDED',
      result,
      ...(above > 0n ? { refund: { status: 'pending' as const, amount: above.toString(), payer: charge.payer } } : {}),
      ...(proof ? { proof } : {}),
      ...(proofOf?.evidence?.provider_signature ? { provider_signature: proofOf.evidence.provider_signature } : {}),
      ...(proofOf?.evidence?.provider ? { provider: proofOf.evidence.provider } : {}),
      ...(proofOf?.evidence?.attempts ? { attempts: proofOf.evidence.attempts } : {}),
      finished_at: new Date().toISOString(),
      duration_ms,
    };
    await this.store(record);
    this.observe(record);
    log.info(
      { execution_id: executionId, capability_id: capabilityId, job_id: charge.job_id, duration_ms: Math.round(duration_ms), payer: charge.payer },
      'execution succeeded',
    );
    return { record, ...(price !== undefined ? { price } : {}) };
  }

  /** Reports a stored record to the observer; an id no definition has is labelled `unknown` (labels stay few). */
  private observe(record: ExecutionRecord, code?: string): void {
    const observer = this.deps.executionObserver;
    if (!observer) return;
    const known = this.deps.catalog.list().some((d) => d.id === record.capability_id);
    observer.executed({ capability_id: known ? record.capability_id : 'unknown', status: record.status, code, duration_ms: record.duration_ms });
  }

  /**
   * Saves the record, retrying through a Redis outage up to the outage tolerance (the capability
   * already ran: its record must not be lost to a blip), then a latency sample (best effort).
   * Throws the Redis error when Redis stays unavailable longer.
   */
  private async store(record: ExecutionRecord): Promise<void> {
    const { executions, telemetry } = this.deps;
    const ok = record.status === 'SUCCEEDED';
    if (telemetry.sample) {
      // the record and its latency sample in one MULTI: one round trip (bench/README.md "Paid
      // execute"); when Redis is unavailable the record alone is retried, the sample is dropped
      try {
        await executions.save(record, telemetry.sample(record.capability_id, record.duration_ms, ok));
        return;
      } catch (e) {
        if (!isRedisUnavailable(e)) throw e;
      }
      await retryWhileRedisUnavailable(() => executions.save(record));
      return;
    }
    // in parallel: the latency sample is best effort and must not add a round trip to the answer
    const sample = telemetry.record(record.capability_id, record.duration_ms, ok).catch(() => undefined);
    await retryWhileRedisUnavailable(() => executions.save(record));
    await sample;
  }
}

/** What a capability's run attached (`CapabilityCall.attach`): the provider's signature, its credit to run once the outcome is decided, and the routing evidence. */
type Evidence = CallEvidence;

/** One execution for {@link Executor.record} to run and record. */
interface Recording {
  executionId: string;
  capabilityId: string;
  charge: ExecutionCharge;
  /** What a success's proof is signed over; absent for a capability that could not run (nothing to prove). */
  proofOf?: { input: unknown; provider: string | null; evidence?: Evidence };
  /** The run itself: the parsed output, or throws the capability's failure. */
  run: () => Promise<Record<string, unknown>>;
  /** Set for a run started early ({@link EarlyRun}); otherwise the run is timed here. */
  timing?: RunTiming;
}

/** When a run started and ended, for a run started before {@link Executor.run} was called (an {@link EarlyRun}). */
interface RunTiming {
  startedAt: number;
  endedAt(): Promise<number>;
}

/** A failure worth retrying (the upstream or chain was unavailable or timed out). */
export function isTransient(failure: CapabilityFailure): boolean {
  return failure.status === 503 || failure.status === 504;
}
