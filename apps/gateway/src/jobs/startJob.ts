import type { planJob, StoredJob, StoredJobPayment } from '@acg/jobs';
import type { SettledPayment } from '@acg/payments';
import type { JobCreated, JobRequest } from '@acg/schemas';
import type { Services } from '../services.js';

/** A validated job plan (`planJob` of @acg/jobs): the steps to run and the budget, integer USDC base units. */
export type JobPlan = ReturnType<typeof planJob>;

/**
 * Stores a paid job and queues it for the workers, once: the one job creation path of
 * `POST /api/v1/jobs` and of the MCP tool `gateway_jobs` (with or without a task). `jobId` is the
 * operation id the payment was reserved for (`job_` + ULID); the payer and the settled payment
 * come from the paywall. A replayed creation never overwrites the stored job (`JobStore.create` is
 * create-if-absent; the BullMQ job id is the job id). Returns the 202 body
 * `{job_id, status: "queued", poll_url}` (`poll_url`: `GET {base_url}/api/v1/jobs/{job_id}`).
 * A payment settled before the job (`exact`) is stored as `{tx_hash, amount}` (as ever); a
 * deferred one (`upto`: verified and reserved, settled when the job ends) as `{scheme: "upto",
 * amount: "0", ceiling, status: "authorized"}` with its reservation key and Permit2 deadline, which
 * the runner uses to stop the job in time and to have what it spent settled (docs/decisions.md
 * "Payment schemes", jobs).
 */
export async function startPaidJob(
  services: Services,
  p: { jobId: string; input: JobRequest; plan: JobPlan; payment: Pick<SettledPayment, 'payer' | 'txHash' | 'amount' | 'deferred' | 'authorization'> },
): Promise<JobCreated> {
  const created = new Date().toISOString();
  const job: StoredJob = {
    job_id: p.jobId,
    objective: p.input.objective,
    capabilities: p.input.capabilities,
    budget: p.plan.budget.toString(),
    spent: '0',
    status: 'queued',
    steps: p.plan.steps,
    result: null,
    error: null,
    payer: p.payment.payer,
    payment: jobPayment(p.payment),
    created_at: created,
    updated_at: created,
    refund_amount: null,
  };
  await services.jobs.store.create(job);
  await services.jobs.queue.enqueue(job.job_id);
  return { job_id: job.job_id, status: 'queued', poll_url: jobPollUrl(services, job.job_id) };
}

/** The stored budget payment of a job paid with `payment` (see {@link startPaidJob}). */
function jobPayment(payment: Pick<SettledPayment, 'txHash' | 'amount' | 'deferred' | 'authorization'>): StoredJobPayment {
  const auth = payment.authorization;
  // `exact`: the record keeps its shape (no `scheme`: absent means `exact`)
  if (!payment.deferred || !auth) return { tx_hash: payment.txHash, amount: payment.amount };
  return {
    scheme: 'upto',
    amount: '0',
    ceiling: payment.amount,
    status: 'authorized',
    authorization: auth.key,
    ...(auth.deadline !== undefined ? { deadline: auth.deadline } : {}),
  };
}

/** `GET {base_url}/api/v1/jobs/{job_id}`, where a job is polled over REST. */
export function jobPollUrl(services: Services, jobId: string): string {
  return `${services.publicBaseUrl()}/api/v1/jobs/${jobId}`;
}
