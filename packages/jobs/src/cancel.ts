import type { StoredJob } from './types.js';

/** Job statuses that end a job. */
export const JOB_ENDED: ReadonlySet<StoredJob['status']> = new Set(['succeeded', 'failed', 'cancelled', 'budget_exhausted']);

/**
 * What a cancel requested now can still do to `job` (docs/decisions.md "Jobs"; the runner stops a
 * cancelled job before its next step, never inside one):
 * - `ended`: the job already ended (its status says how); nothing to cancel;
 * - `too_late`: no step is left to skip (the running step is the last one): the job ends as that
 *   step ends, `succeeded` or `failed`, and is charged for what ran; a cancel would change nothing;
 * - `cancellable`: a step has not started; the job stops before it and the unspent budget is refunded.
 * A cancel accepted in the instant the runner starts its last step comes too late as well: the
 * job's final status then says what happened (`succeeded`, not `cancelled`).
 */
export function cancelEffect(job: Pick<StoredJob, 'status' | 'steps'>): 'ended' | 'too_late' | 'cancellable' {
  if (JOB_ENDED.has(job.status)) return 'ended';
  return job.steps.some((s) => s.status === 'pending') ? 'cancellable' : 'too_late';
}
