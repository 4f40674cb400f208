import type { GatewayContext } from '../context.js';
import { GatewayRequestError, type GatewayError } from '../errors.js';
import type { JobRecord } from '../types.js';
import { getJob } from './getJob.js';
import { sleep } from './internal.js';

/** Parameters of {@link waitForJob}. */
export interface WaitForJobParameters {
  jobId: string;
  /** Bearer token of the address that paid the budget ({@link getJob}: only the payer may read a job). */
  accessToken: string | undefined;
  /** First poll interval, ms (default 500); doubles up to `maxIntervalMs`. */
  intervalMs?: number;
  /** ms, default 5 000 */
  maxIntervalMs?: number;
  /** ms, default 10 minutes */
  timeoutMs?: number;
  /** Keep polling until the refund of unspent budget is sent (default true). */
  waitForRefund?: boolean;
  /** Called with every record that changed (status, `updated_at` or refund status). */
  onProgress?(job: JobRecord): void;
  signal?: AbortSignal;
}

/** The ended job: `succeeded | failed | cancelled | budget_exhausted`. */
export type WaitForJobReturnType = JobRecord;

/** Errors of {@link waitForJob}. */
export type WaitForJobErrorType = GatewayError | GatewayRequestError;

const JOB_END_STATES = new Set(['succeeded', 'failed', 'cancelled', 'budget_exhausted']);

/**
 * Polls a job until it ends and, when budget is left, until its refund is sent; backoff from
 * `intervalMs` doubling to `maxIntervalMs`.
 *
 * @throws {GatewayRequestError} after `timeoutMs` or an abort (names the last status). {GatewayError} from {@link getJob}.
 *
 * @example
 * const job = await waitForJob(ctx, { jobId, accessToken, onProgress: (j) => console.log(j.status) })
 */
export async function waitForJob(ctx: GatewayContext, params: WaitForJobParameters): Promise<WaitForJobReturnType> {
  const { jobId } = params;
  const deadline = Date.now() + (params.timeoutMs ?? 600_000);
  let delay = params.intervalMs ?? 500;
  let last = '';
  for (;;) {
    const job = await getJob(ctx, { jobId, accessToken: params.accessToken });
    const seen = `${job.status}:${job.updated_at}:${job.refund?.status ?? ''}`;
    if (seen !== last) {
      last = seen;
      params.onProgress?.(job);
    }
    const ended = JOB_END_STATES.has(job.status);
    if (ended && (!job.refund || job.refund.status === 'sent' || params.waitForRefund === false)) return job;
    if (Date.now() > deadline || params.signal?.aborted) {
      throw new GatewayRequestError(`${ctx.baseUrl}/api/v1/jobs/${jobId}`, `Job ${jobId} did not end within the wait (last status ${job.status}).`, {});
    }
    await sleep(delay);
    delay = Math.min(params.maxIntervalMs ?? 5_000, delay * 2);
  }
}
