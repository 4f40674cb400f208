import { z } from 'zod';
import { ExecutionError, ExecutionPayment, Refund } from './execution.js';
import { ExecutionId, JobId } from './ids.js';
import { limitMessage, MAX_JOB_CAPABILITIES, MAX_JOB_OBJECTIVE_CHARS, MAX_JOB_STEPS } from './limits.js';
import { Address, CapabilityId, DateTime, JsonObject, UintString, Uri } from './primitives.js';

/** Amount in whole USDC as a JSON number, at most 6 decimals (docs/spec-notes.md 2.8 `budget_usdc`). */
export const UsdcAmount = z
  .number()
  .nonnegative()
  .refine((n) => Number.isFinite(n) && Math.abs(Math.round(n * 1e6) - n * 1e6) < 1e-6, 'at most 6 decimals');
export type UsdcAmount = z.infer<typeof UsdcAmount>;

/** One planned step: run `capability_id` with `input` (docs/decisions.md "Jobs"). */
export const JobStepPlan = z.strictObject({
  capability_id: CapabilityId,
  input: JsonObject,
});
export type JobStepPlan = z.infer<typeof JobStepPlan>;

/**
 * Body of `POST /api/v1/jobs` (packages/jobs README; docs/overview.md "What it is", Jobs): `objective` (1 to
 * {@link MAX_JOB_OBJECTIVE_CHARS} characters), `budget_usdc` (> 0, whole USDC, paid by x402),
 * `capabilities` (1 to {@link MAX_JOB_CAPABILITIES} ids) and optional `steps` (1 to
 * {@link MAX_JOB_STEPS}; ordered plan; each step's capability must be listed in `capabilities`).
 * Over a count or length bound the zod issue names the limit (`limits.ts`: 422 with `limit`, `max`).
 */
export const JobRequest = z
  .strictObject({
    objective: z
      .string()
      .min(1)
      .max(MAX_JOB_OBJECTIVE_CHARS, limitMessage('objective', MAX_JOB_OBJECTIVE_CHARS, 'characters')),
    budget_usdc: UsdcAmount.refine((n) => n > 0, 'must be greater than 0'),
    capabilities: z
      .array(CapabilityId)
      .min(1)
      .max(MAX_JOB_CAPABILITIES, limitMessage('capabilities', MAX_JOB_CAPABILITIES, 'capabilities')),
    steps: z
      .array(JobStepPlan)
      .min(1)
      .max(MAX_JOB_STEPS, limitMessage('steps', MAX_JOB_STEPS, 'steps'))
      .optional(),
  })
  .superRefine((job, ctx) => {
    // one set lookup per step (a list scan per step was quadratic in the request size)
    const listed = new Set(job.capabilities);
    job.steps?.forEach((step, index) => {
      if (!listed.has(step.capability_id)) {
        ctx.addIssue({
          code: 'custom',
          message: `step capability ${step.capability_id} is not listed in capabilities`,
          path: ['steps', index, 'capability_id'],
        });
      }
    });
  });
export type JobRequest = z.infer<typeof JobRequest>;

/** Job status: `queued → running → succeeded | failed | cancelled | budget_exhausted` (docs/decisions.md "Jobs"). */
export const JobStatus = z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled', 'budget_exhausted']);
export type JobStatus = z.infer<typeof JobStatus>;

/** Step status: `pending | running | succeeded | failed | skipped` (skipped: price did not fit the remaining budget). */
export const JobStepStatus = z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped']);
export type JobStepStatus = z.infer<typeof JobStepStatus>;

/**
 * One step of a job record (docs/decisions.md "Jobs"): its {@link JobStepPlan} (`capability_id`,
 * `input`), then how it ran: `execution_id` (null until executed), `status`, `cost_usdc` (whole
 * USDC spent on it), `started_at`/`finished_at` (RFC 3339 UTC or null), and `result` or `error`
 * (null when absent); `cost_base_units` is the exact cost (integer string, USDC base units) and
 * `attempts` how often the step was tried.
 */
export const JobStep = z.object(JobStepPlan.shape).extend({
  execution_id: ExecutionId.nullable(),
  status: JobStepStatus,
  cost_usdc: UsdcAmount,
  cost_base_units: UintString,
  attempts: z.int().nonnegative(),
  started_at: DateTime.nullable(),
  finished_at: DateTime.nullable(),
  result: JsonObject.nullable(),
  error: ExecutionError.nullable(),
  /** JWS proof of a succeeded step's result (as on `POST /api/v1/execute`; docs/decisions.md "Proofs and receipts"), when the gateway signs proofs. */
  proof: z.string().optional(),
});
export type JobStep = z.infer<typeof JobStep>;

/** Response of `POST /api/v1/jobs` (202): `{job_id, status, poll_url}` (docs/decisions.md "Jobs"). */
export const JobCreated = z.object({
  job_id: JobId,
  status: JobStatus,
  poll_url: Uri,
});
export type JobCreated = z.infer<typeof JobCreated>;

/**
 * The budget payment of a job (docs/decisions.md "Jobs", "Payment schemes"): {@link ExecutionPayment}
 * (`tx_hash`, `amount`, `status`) plus `scheme`, how it was paid.
 * - `exact` (and records without `scheme`): the whole budget was settled when the job was created
 *   (`amount` = the budget, `tx_hash` its transaction); the unspent part is refunded when it ends.
 * - `upto`: the payer authorized `ceiling` (the budget, integer string, USDC base units) and the job
 *   settles only what its steps spent when it ends, with no refund: `amount` is what was (or is
 *   being) settled, `"0"` until then; `status` `authorized` (running: nothing settled yet),
 *   `settling` (ended: the amount is being settled), `not_charged` (ended having spent nothing: no
 *   transaction), then `settled` / `final` (with `tx_hash`) or `unpaid`.
 */
export const JobPayment = ExecutionPayment.extend({
  scheme: z.enum(['exact', 'upto']).optional(),
  ceiling: UintString.optional(),
  status: z.enum(['authorized', 'settling', 'not_charged', 'settled', 'final', 'unpaid']).optional(),
});
export type JobPayment = z.infer<typeof JobPayment>;

/**
 * Job record returned by `GET /api/v1/jobs/{job_id}` (docs/decisions.md "Jobs"): `job_id`, `objective`,
 * `budget_usdc`, `spent_usdc`, `capabilities`, `status`, `steps`, `result` and `error` (null until
 * the job ends), `created_at`, `updated_at` (RFC 3339 UTC), and `refund` of the unspent budget
 * (USDC base units; null until the job ends or when nothing is left). Exact amounts beside the
 * whole-USDC numbers: `budget_base_units`, `spent_base_units` (integer strings, USDC base units);
 * `payer` (the wallet that paid the budget, the only one who may cancel), the budget `payment`
 * and `cancel_requested`.
 */
export const JobRecord = z.object({
  job_id: JobId,
  objective: z.string().min(1),
  budget_usdc: UsdcAmount,
  spent_usdc: UsdcAmount,
  budget_base_units: UintString,
  spent_base_units: UintString,
  capabilities: z.array(CapabilityId).min(1),
  status: JobStatus,
  steps: z.array(JobStep),
  result: JsonObject.nullable(),
  error: ExecutionError.nullable(),
  payer: Address,
  payment: JobPayment,
  cancel_requested: z.boolean(),
  created_at: DateTime,
  updated_at: DateTime,
  refund: Refund.nullable(),
});
export type JobRecord = z.infer<typeof JobRecord>;
