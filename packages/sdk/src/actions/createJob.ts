import type { GatewayContext } from '../context.js';
import type { GatewayError, GatewayRequestError, PaymentRequiredError, PaymentTermsMismatchError, SpendLimitExceededError } from '../errors.js';
import { idempotencyHeader, jsonOf } from '../http.js';
import { payAndRetry } from '../payAndRetry.js';
import { registryTerms } from '../chooseRequirement.js';
import type { JobCreated, JobRequest } from '../types.js';
import { parseUsdc } from '../units.js';
import { throwForStatus } from './internal.js';

/** Parameters of {@link createJob}: the job request (docs/spec-notes.md 2.8) plus transport options. */
export interface CreateJobParameters {
  /** `{objective, budget_usdc, capabilities, steps?}`; `budget_usdc` in whole USDC (at most 6 decimals). */
  request: JobRequest;
  /** `Idempotency-Key` (default: a random UUID). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** `{job_id, status: "queued", poll_url}` (HTTP 202). */
export type CreateJobReturnType = JobCreated;

/** Errors of {@link createJob}. */
export type CreateJobErrorType = GatewayError | PaymentRequiredError | PaymentTermsMismatchError | SpendLimitExceededError | GatewayRequestError;

const JOBS = 'gateway.jobs';

/**
 * Creates a job (docs/spec-notes.md 2.8, docs/decisions.md "Jobs"): `POST /api/v1/jobs`. The plan is checked by the gateway
 * first (400/422 cost nothing); then the budget is paid with x402 through
 * {@link payAndRetry}: the requirement must ask exactly `budget_usdc` and match the terms
 * `/registry` advertises for `gateway.jobs`, within the spend limits. With `exact` (the default)
 * the whole budget is paid and the unspent part refunded on-chain when the job ends; with `upto`
 * (`schemes`) the budget is authorized, the job settles what its steps spent when it ends, and the
 * spend limits count the whole budget (the 202 carries no `PAYMENT-RESPONSE`; the job record's
 * `payment` shows the settlement).
 *
 * @throws {GatewayError} 400 bad plan, 422 not runnable. {SpendLimitExceededError} {PaymentTermsMismatchError} before signing.
 * @throws {PaymentRequiredError} no account, or the payment was refused. {GatewayRequestError} unreachable.
 *
 * @example
 * const { job_id } = await createJob(ctx, { request: { objective: 'balances', budget_usdc: 0.004, capabilities: ['intelligence.wallet_balances'] } })
 */
export async function createJob(ctx: GatewayContext, { request, idempotencyKey, signal }: CreateJobParameters): Promise<CreateJobReturnType> {
  const path = '/api/v1/jobs';
  const budget = parseUsdc(request.budget_usdc, 'budget_usdc');
  const terms = async () => ({ ...registryTerms(await ctx.registry.capability(JOBS)), exactAmount: budget });
  const r = await payAndRetry(ctx, {
    path,
    method: 'POST',
    headers: idempotencyHeader(ctx, idempotencyKey),
    body: JSON.stringify(request),
    signal,
    label: JOBS,
    terms,
    refreshTerms: async () => ({ ...registryTerms(await ctx.registry.capability(JOBS, { refresh: true })), exactAmount: budget }),
  });
  if (r.response.status !== 202) throwForStatus(r);
  return jsonOf<JobCreated>(ctx, path, r);
}
