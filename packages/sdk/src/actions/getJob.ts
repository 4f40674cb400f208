import type { GatewayContext } from '../context.js';
import { AcgError, type GatewayError, type GatewayRequestError } from '../errors.js';
import { jsonOf, request } from '../http.js';
import type { JobRecord } from '../types.js';
import { throwForStatus } from './internal.js';

/** Parameters of {@link getJob}. */
export interface GetJobParameters {
  /** `job_` + ULID, from {@link createJob}. */
  jobId: string;
  /** Bearer token (Sign-In with Ethereum) of the address that paid the budget: only the payer may read a job. */
  accessToken: string | undefined;
  signal?: AbortSignal;
}

/** The job record: status, steps, spend (`*_base_units`: integer strings of USDC base units) and refund. */
export type GetJobReturnType = JobRecord;

/** Errors of {@link getJob}. */
export type GetJobErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `GET /api/v1/jobs/{id}` (docs/spec-notes.md 2.8), readable by the payer only (bearer token of
 * the address that paid the budget). Free.
 *
 * @throws {AcgError} no token. {GatewayError} 401 bad token, 404 unknown job or paid by another address. {GatewayRequestError} unreachable.
 *
 * @example
 * const job = await getJob(ctx, { jobId, accessToken })
 */
export async function getJob(ctx: GatewayContext, { jobId, accessToken, signal }: GetJobParameters): Promise<GetJobReturnType> {
  if (!accessToken) throw new AcgError('Reading a job needs the bearer token of the address that paid it: sign in first (signIn / client.auth.signIn()).');
  const path = `/api/v1/jobs/${encodeURIComponent(jobId)}`;
  const r = await request(ctx, path, { signal, headers: { authorization: `Bearer ${accessToken}` } });
  if (!r.response.ok) throwForStatus(r);
  return jsonOf<JobRecord>(ctx, path, r);
}
