import type { GatewayContext } from '../context.js';
import { AcgError, type GatewayError, type GatewayRequestError } from '../errors.js';
import { jsonOf, request } from '../http.js';
import { throwForStatus } from './internal.js';

/** Parameters of {@link cancelJob}. */
export interface CancelJobParameters {
  jobId: string;
}

/** `{job_id, status, cancel_requested: true}`: the job stops before its next step. */
export interface CancelJobReturnType {
  job_id: string;
  status: string;
  cancel_requested: true;
}

/** Errors of {@link cancelJob}. */
export type CancelJobErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `POST /api/v1/jobs/{id}/cancel`: asks to cancel a job before its next step; proves the payer
 * by signing `Cancel job <id>` (EIP-191) with the context's account. Free.
 *
 * @throws {AcgError} no account. {GatewayError} 403 not the payer, 404 unknown, 409 already ended.
 *
 * @example
 * await cancelJob(ctx, { jobId })
 */
export async function cancelJob(ctx: GatewayContext, { jobId }: CancelJobParameters): Promise<CancelJobReturnType> {
  if (!ctx.account) throw new AcgError('Cancelling a job needs the account that paid its budget.');
  const path = `/api/v1/jobs/${encodeURIComponent(jobId)}/cancel`;
  const signature = await ctx.account.signMessage({ message: `Cancel job ${jobId}` });
  const r = await request(ctx, path, { method: 'POST', body: JSON.stringify({ signature }) });
  if (!r.response.ok) throwForStatus(r);
  return jsonOf(ctx, path, r);
}
