import type { GatewayContext } from '../context.js';
import type { GatewayError, GatewayRequestError } from '../errors.js';
import { jsonOf, request } from '../http.js';
import type { JobRecord } from '../types.js';
import { throwForStatus } from './internal.js';

/** Parameters of {@link getJob}. */
export interface GetJobParameters {
  /** `job_` + ULID (the unguessable id is the read capability). */
  jobId: string;
  signal?: AbortSignal;
}

/** The job record: status, steps, spend (`*_base_units`: integer strings of USDC base units) and refund. */
export type GetJobReturnType = JobRecord;

/** Errors of {@link getJob}. */
export type GetJobErrorType = GatewayError | GatewayRequestError;

/**
 * `GET /api/v1/jobs/{id}` (docs/spec-notes.md 2.8). Free.
 *
 * @throws {GatewayError} 404 unknown job. {GatewayRequestError} unreachable.
 *
 * @example
 * const job = await getJob(ctx, { jobId })
 */
export async function getJob(ctx: GatewayContext, { jobId, signal }: GetJobParameters): Promise<GetJobReturnType> {
  const path = `/api/v1/jobs/${encodeURIComponent(jobId)}`;
  const r = await request(ctx, path, { signal });
  if (!r.response.ok) throwForStatus(r);
  return jsonOf<JobRecord>(ctx, path, r);
}
