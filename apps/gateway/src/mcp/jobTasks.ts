import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { cancelEffect, JOB_ENDED, jobView, type StoredJob } from '@acg/jobs';
import { readRefund, settlementState } from '@acg/treasury';
import { accountOf, bearerIdentity } from '../caller.js';
import { JobId, type JobRecord } from '@acg/schemas';
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, type CallToolResult, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import type { Services } from '../services.js';
import { paidBy } from '../trpc/procedures.js';

/**
 * MCP tasks backed by gateway jobs (MCP 2025-11-25 tasks, the SDK's experimental task API;
 * docs/mcp-tasks.md). A task is a job seen through MCP: its `taskId` is the job id and a tag
 * ({@link jobTaskId}), its state is the job record in Redis, so a task outlives the HTTP request,
 * the gateway process and a restart, and any replica answers for it. Nothing is kept in memory
 * but the tag key, read once from Redis.
 */

/** Redis key (under the deployment's prefix) of the random key that tags task ids; created once, shared by every replica. */
const TASK_ID_KEY = 'mcp:task_id_key';
const tagKeys = new WeakMap<Services, Promise<Buffer>>();

/** The deployment's task-id key: 32 random bytes in Redis, set once (SET NX) and read by every replica. */
function taskIdKey(services: Services): Promise<Buffer> {
  let hit = tagKeys.get(services);
  if (!hit) {
    const key = `${services.keys.prefix}${TASK_ID_KEY}`;
    hit = (async () => {
      await services.redis.set(key, randomBytes(32).toString('base64url'), 'NX');
      const stored = await services.redis.get(key);
      if (!stored) throw new Error('the MCP task id key is missing from Redis');
      return Buffer.from(stored, 'base64url');
    })();
    // a failure (e.g. Redis down) is not cached: the next call tries again
    hit.catch(() => tagKeys.delete(services));
    tagKeys.set(services, hit);
  }
  return hit;
}

const tagOf = (key: Buffer, jobId: string) => createHmac('sha256', key).update(jobId).digest('base64url').slice(0, 22);

/**
 * The MCP task id of a job: `<job_id>.<tag>`, the tag being 128 bits of HMAC-SHA256 of the job id
 * under the deployment's random key. It maps to the job id (its prefix) yet cannot be derived
 * from it: the job id appears in receipts and execution records, the task id only in the paid
 * call's answer, which goes to the payer alone. Same job, same task id (a replay gets it again).
 */
export async function jobTaskId(services: Services, jobId: string): Promise<string> {
  return `${jobId}.${tagOf(await taskIdKey(services), jobId)}`;
}

/** The job id of a task id made by {@link jobTaskId}, or undefined when malformed or its tag is wrong. */
export async function jobIdOfTask(services: Services, taskId: string): Promise<string | undefined> {
  const m = /^(job_[0-9A-HJKMNP-TV-Z]{26})\.([A-Za-z0-9_-]{22})$/.exec(taskId);
  if (!m || !JobId.safeParse(m[1]).success) return undefined;
  const expected = Buffer.from(tagOf(await taskIdKey(services), m[1]));
  const given = Buffer.from(m[2]);
  return expected.length === given.length && timingSafeEqual(expected, given) ? m[1] : undefined;
}

/** How long a task's record stays readable, ms: the job record's lifetime in Redis (30 days; `JobStore`). */
export const JOB_TASK_TTL_MS = 30 * 24 * 3600 * 1000;
/** Suggested wait between two `tasks/get`, ms. */
export const JOB_TASK_POLL_INTERVAL_MS = 1000;

/** `_meta` key of a task's progress in `tasks/get`, `tasks/cancel` and the created task. */
export const TASK_PROGRESS_META = 'progress';

/** Who asks: the wallet of a valid bearer token, `invalid` for a token that does not resolve, `none` without one. */
export type TaskCaller = { kind: 'wallet'; address: string } | { kind: 'invalid' } | { kind: 'none' };

/**
 * The caller of one MCP request from its HTTP `Authorization` header (`Bearer <token>` from
 * Sign-In with Ethereum, `POST /v1/auth/token`), through the one identity step (`bearerIdentity`):
 * a header that is malformed or whose token does not resolve (or cannot be read) is `invalid`.
 */
export async function taskCaller(services: Services, authorization: string | undefined): Promise<TaskCaller> {
  const identity = await bearerIdentity(services, authorization).catch(() => ({ kind: 'refused' as const, detail: '' }));
  if (identity === undefined) return { kind: 'none' };
  const address = accountOf(identity);
  return address ? { kind: 'wallet', address } : { kind: 'invalid' };
}

/**
 * The MCP task status of a job, what actually happened (docs/mcp-tasks.md "Cancelling"): `working`
 * while `queued` or `running` (a requested cancel included: the job stops before its next step,
 * never inside one, so it is not over yet), `completed` when `succeeded`, `cancelled` when
 * `cancelled`, `failed` when `failed` or `budget_exhausted`. A cancel that came too late (the last
 * step was running) leaves the job's real end: `completed` (or `failed`), charged as such.
 */
export function taskStatus(job: Pick<StoredJob, 'status'>): Task['status'] {
  if (job.status === 'cancelled') return 'cancelled';
  if (job.status === 'succeeded') return 'completed';
  if (job.status === 'failed' || job.status === 'budget_exhausted') return 'failed';
  return 'working';
}

/**
 * A job's progress: steps ended (succeeded, failed or skipped) of all steps, and USDC spent of the
 * budget (whole USDC numbers and exact integer base units).
 */
export function jobProgress(job: StoredJob) {
  const done = job.steps.filter((s) => s.status === 'succeeded' || s.status === 'failed' || s.status === 'skipped').length;
  return {
    job_status: job.status,
    steps_done: done,
    steps_total: job.steps.length,
    spent_usdc: Number(BigInt(job.spent)) / 1e6,
    budget_usdc: Number(BigInt(job.budget)) / 1e6,
    spent_base_units: job.spent,
    budget_base_units: job.budget,
  };
}

/**
 * The MCP `Task` of a job (`taskId` from {@link jobTaskId}, `createdAt`/`lastUpdatedAt` from the record,
 * `ttl` {@link JOB_TASK_TTL_MS}, `pollInterval` {@link JOB_TASK_POLL_INTERVAL_MS}), its
 * `statusMessage` saying the progress in words ("2/3 steps done; 0.002 of 0.01 USDC spent") and
 * `_meta.progress` the same as numbers ({@link jobProgress}).
 */
export function jobTask(job: StoredJob, taskId: string, cancelRequested: boolean): Task & { _meta: Record<string, unknown> } {
  const progress = jobProgress(job);
  const cancel = !cancelRequested
    ? ''
    : !JOB_ENDED.has(job.status)
      ? `; cancel requested: the job stops before its next step and ${job.payment.scheme === 'upto' ? 'only what ran is settled' : 'the unspent budget is refunded'}`
      : job.status === 'cancelled'
        ? ''
        : '; the cancel came too late: the last step had started, and the job ended as it ran';
  return {
    taskId,
    status: taskStatus(job),
    statusMessage: `job ${job.status}: ${progress.steps_done}/${progress.steps_total} steps done; ${progress.spent_usdc} of ${progress.budget_usdc} USDC spent${cancel}`,
    createdAt: job.created_at,
    lastUpdatedAt: job.updated_at,
    ttl: JOB_TASK_TTL_MS,
    pollInterval: JOB_TASK_POLL_INTERVAL_MS,
    _meta: { [TASK_PROGRESS_META]: progress },
  };
}

/**
 * The `tasks/result` of a job: `structuredContent` = the public job record (`GET /api/v1/jobs/{id}`:
 * steps with their results, execution ids and JWS `proof`s, spent, refund with its tx hash once
 * sent), the same JSON as text, `isError` when the job failed or ran out of budget.
 */
export function jobTaskResult(record: JobRecord): CallToolResult {
  const failed = record.status === 'failed' || record.status === 'budget_exhausted';
  return {
    content: [{ type: 'text', text: JSON.stringify(record) }],
    structuredContent: record as unknown as Record<string, unknown>,
    ...(failed ? { isError: true } : {}),
    _meta: { job_id: record.job_id },
  };
}

/**
 * The gateway's MCP {@link TaskStore} for one request (`caller`: who asks, resolved once when needed) (the SDK installs `tasks/get`,
 * `tasks/result` and `tasks/cancel` on it), reading and cancelling jobs in Redis for `caller`.
 *
 * Who may see a task (stateless MCP has no session): the task id ({@link jobTaskId}) is an
 * unguessable capability handed only to the payer; a request that also carries a bearer token
 * must be the payer's. Anything else (a wrong tag, a job id alone, another wallet's or an invalid
 * token) is "task not found", never "forbidden": nothing says the task exists. `tasks/cancel`
 * follows the same rule; it requests the job's cancel, and the job runner refunds exactly the
 * unspent budget on-chain when the job stops before its next step (a job paid with `upto`: only
 * what ran is settled, no refund).
 * Tasks are only created by a paid `tools/call` of `gateway_jobs` (`createTask` throws), are not
 * listed (`tasks/list` is not offered) and hold no side-channel messages.
 */
export class JobTaskStore implements TaskStore {
  constructor(
    private readonly services: Services,
    private readonly caller: () => Promise<TaskCaller>,
  ) {}

  createTask(_params: CreateTaskOptions): Promise<Task> {
    return Promise.reject(new McpError(ErrorCode.InvalidRequest, 'Tasks are created by a paid tools/call of gateway_jobs.'));
  }

  async getTask(taskId: string): Promise<Task | null> {
    const found = await this.visible(taskId);
    return found ? jobTask(found.job, taskId, found.cancelRequested) : null;
  }

  storeTaskResult(): Promise<void> {
    return Promise.reject(new Error('A job task stores its result through the job runner.'));
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const found = await this.visible(taskId);
    if (!found) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId.slice(0, 64)}`);
    const [refund, settlement] = await Promise.all([
      readRefund(this.services.redis, this.services.keys, found.job.job_id),
      settlementState(this.services.redis, this.services.keys, found.job.job_id),
    ]);
    return jobTaskResult(jobView(found.job, refund, found.cancelRequested, settlement));
  }

  /**
   * `tasks/cancel` (the only status change a client makes): requests the job's cancel when a step
   * is left to skip; the answer is then the task, `working` with "cancel requested" until the
   * running step ends and the job is `cancelled`. A cancel that can change nothing is refused with
   * what happened instead (-32602): the job ended (`Cannot cancel task in terminal status`), or
   * its last step is running (`reason: "cancel_too_late"`: it ends `completed` or `failed` and is
   * charged for that step, as its status will say).
   */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    if (status !== 'cancelled') throw new McpError(ErrorCode.InvalidRequest, 'A job task changes status only by running or by tasks/cancel.');
    const found = await this.visible(taskId);
    if (!found) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId.slice(0, 64)}`);
    const effect = cancelEffect(found.job);
    if (effect === 'ended') throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: the job ${found.job.status}.`);
    if (effect === 'too_late') {
      throw new McpError(
        ErrorCode.InvalidParams,
        "Too late to cancel: the job's last step is running. The job ends as that step ends (completed, or failed) and is charged for what ran; tasks/get says which.",
        { reason: 'cancel_too_late', job_id: found.job.job_id, [TASK_PROGRESS_META]: jobProgress(found.job) },
      );
    }
    await this.services.jobs.store.requestCancel(found.job.job_id);
  }

  listTasks(): Promise<{ tasks: Task[] }> {
    return Promise.reject(new Error('tasks/list is not offered: keep the task ids you were given.'));
  }

  /** The job of `taskId` when this caller may see it (see the class docs), with its cancel flag. */
  private async visible(taskId: string): Promise<{ job: StoredJob; cancelRequested: boolean } | undefined> {
    const jobId = await jobIdOfTask(this.services, taskId);
    if (!jobId) return undefined;
    const caller = await this.caller();
    if (caller.kind === 'invalid') return undefined;
    const { store } = this.services.jobs;
    const job = await store.get(jobId);
    if (!job) return undefined;
    if (caller.kind === 'wallet' && !paidBy(caller.address, job.payer)) return undefined;
    return { job, cancelRequested: await store.cancelRequested(jobId) };
  }
}
