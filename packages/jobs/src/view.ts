import type { ExecutionPayment, JobRecord, RefundRecord } from '@acg/schemas';
import type { StoredJob } from './types.js';
import { baseUnitsToUsdc } from './units.js';

/** Where the budget payment's settlement stands on chain (@acg/payments `settlementState`): `settled` → `final`, or `unpaid`. */
export type JobSettlement = { status: NonNullable<ExecutionPayment['status']>; tx_hash: `0x${string}` };

/**
 * The public job record (docs/decisions.md "Jobs"): amounts as whole-USDC numbers (`budget_usdc`,
 * `spent_usdc`, step `cost_usdc`) plus their exact integer base units (`*_base_units`), the refund
 * of the unspent budget with its tx hash once sent, and whether a cancel was requested. With
 * `settlement` (the budget payment tracked until final: docs/decisions.md "Confirmations and
 * reorgs") `payment.status` says `settled` or `final`, and `payment.tx_hash` the transaction on
 * chain now; `unpaid` (reorged out for good) also withholds every result and proof, as an
 * execution record does. A job paid with `upto` (`payment.scheme`) has no refund: its `payment`
 * shows the `ceiling` it authorized, the `amount` settled when it ended (its steps' spend) and
 * `status` `authorized` → `settling` | `not_charged` → `settled` → `final`, with the settlement's
 * `tx_hash` once tracked.
 */
export function jobView(job: StoredJob, refund: RefundRecord | undefined, cancelRequested: boolean, settlement?: JobSettlement): JobRecord {
  const view = plainJobView(job, refund, cancelRequested);
  if (!settlement) return view;
  const payment = { ...view.payment, ...settlement };
  if (settlement.status !== 'unpaid') return { ...view, payment };
  return { ...view, payment, result: null, steps: view.steps.map(({ proof: _proof, ...s }) => ({ ...s, result: null })) };
}

/** The budget payment as the record shows it: without the reservation key and deadline the runner keeps. */
function publicPayment(p: StoredJob['payment']): JobRecord['payment'] {
  const { authorization: _authorization, deadline: _deadline, ...shown } = p;
  return shown;
}

function plainJobView(job: StoredJob, refund: RefundRecord | undefined, cancelRequested: boolean): JobRecord {
  return {
    job_id: job.job_id,
    objective: job.objective,
    budget_usdc: baseUnitsToUsdc(job.budget),
    spent_usdc: baseUnitsToUsdc(job.spent),
    budget_base_units: job.budget,
    spent_base_units: job.spent,
    capabilities: job.capabilities,
    status: job.status,
    steps: job.steps.map((s) => ({
      capability_id: s.capability_id,
      input: s.input,
      execution_id: s.execution_id,
      status: s.status,
      cost_usdc: baseUnitsToUsdc(s.cost),
      cost_base_units: s.cost,
      attempts: s.attempts,
      started_at: s.started_at,
      finished_at: s.finished_at,
      result: s.result,
      error: s.error,
      ...(s.proof ? { proof: s.proof } : {}),
    })),
    result: job.result,
    error: job.error,
    payer: job.payer,
    payment: publicPayment(job.payment),
    cancel_requested: cancelRequested,
    created_at: job.created_at,
    updated_at: job.updated_at,
    refund:
      job.refund_amount && job.payment.scheme !== 'upto'
        ? { status: refund?.status ?? ('pending' as const), amount: job.refund_amount, ...(refund?.tx_hash ? { tx_hash: refund.tx_hash } : {}) }
        : null,
  };
}
