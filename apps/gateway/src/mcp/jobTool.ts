import { gatewayJobs } from '@acg/capabilities';
import { planJob, PlanError } from '@acg/jobs';
import { JobCreated, JobRecord, JobRequest, mcpToolName, toJsonSchema, X402PaymentRequired } from '@acg/schemas';
import type { CreateTaskResult } from '@modelcontextprotocol/sdk/experimental/tasks/types.js';
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ulid } from 'ulid';
import { startPaidJob } from '../jobs/startJob.js';
import { embeddable, exampleInput, mcpBazaar } from '../paidRoute/bazaar.js';
import { carriesPayment, paidRequest, payForCall } from '../paidRoute/paidCall.js';
import { JOB_SCHEMES, stepCapability } from '../routers/jobs.js';
import type { Services } from '../services.js';
import { problemDetails } from '../trpc/problem.js';
import { jobTask, jobTaskId, type TaskCaller } from './jobTasks.js';
import { MCP_PATH } from './paidTool.js';
import { PAYMENT_META, paymentRequiredResult, problemResult, settlementMeta, toolResult } from './results.js';

/** MCP name of the job tool (`gateway.jobs` with its dot replaced). */
export const JOBS_TOOL = mcpToolName(gatewayJobs.id);

/** The paywall route of jobs: one payment buys one job on REST (`POST /api/v1/jobs`) or MCP. */
const JOBS_ROUTE = 'jobs';

/** JSON-RPC error code of x402's MCP payment signalling (`error.data` = the PaymentRequired), used where a tool result cannot carry it. */
export const X402_PAYMENT_REQUIRED_CODE = 402;

const inputSchema = { ...embeddable(toJsonSchema(JobRequest, { io: 'input' })), type: 'object' } as Tool['inputSchema'];
const outputSchema = {
  type: 'object',
  anyOf: [embeddable(toJsonSchema(JobCreated)), embeddable(toJsonSchema(JobRecord)), embeddable(toJsonSchema(X402PaymentRequired))],
} as Tool['outputSchema'];

let bazaar: Record<string, unknown> | undefined;
/** `{bazaar}` of the job tool: tool name, the job request schema and example, the 202 body schema and example. */
function jobsBazaar(): Record<string, unknown> {
  bazaar ??= mcpBazaar({
    toolName: JOBS_TOOL,
    description: gatewayJobs.description,
    input: { schema: toJsonSchema(JobRequest, { io: 'input' }), example: exampleInput(gatewayJobs) },
    output: { schema: toJsonSchema(JobCreated), example: gatewayJobs.example.response },
  });
  return bazaar;
}

/**
 * The `gateway_jobs` tool's listing (docs/mcp-tasks.md): `inputSchema` = the job request
 * (`POST /api/v1/jobs` body), `execution.taskSupport: "optional"`, `outputSchema` = `anyOf` the
 * 202 body `{job_id, status, poll_url}` (a call without a task), the job record (the task's
 * result) and x402's PaymentRequired; `_meta.payment = "x402"`, the price being the job's budget.
 */
export function jobsTool(): Tool {
  return {
    name: JOBS_TOOL,
    title: gatewayJobs.id,
    description:
      `${gatewayJobs.description} Paid with x402 for budget_usdc (called without _meta["x402/payment"] it answers the x402 PaymentRequired): \`exact\` pays the whole budget and refunds the unspent part when the job ends; \`upto\` authorizes the budget and settles only what the steps spent, with no refund. ` +
      'Call it as an MCP task (params.task) to get the task at once, then poll tasks/get (status and progress: steps done, USDC spent of the budget), ' +
      'read tasks/result (the job record with its proofs) or tasks/cancel it (the unspent budget is refunded on-chain). Without a task it answers {job_id, status, poll_url}.',
    inputSchema,
    outputSchema,
    execution: { taskSupport: 'optional' },
    annotations: { title: gatewayJobs.name, openWorldHint: true },
    _meta: { capability_id: gatewayJobs.id, price_base_units: null, price_unit: 'budget_usdc', payment: 'x402' },
  };
}

/** What a paid job call asks for: `task` when the request is task-augmented (MCP `params.task`). */
export interface JobsCall {
  args: unknown;
  meta: Record<string, unknown> | undefined;
  task: { ttl?: number } | undefined;
  caller: () => Promise<TaskCaller>;
}

/**
 * Calls `gateway_jobs` (docs/mcp-tasks.md): the arguments are a job request, validated and planned
 * before any payment exactly as `POST /api/v1/jobs` does (invalid → 400/413/422 problem); then the
 * paywall takes the x402 payment of `_meta["x402/payment"]` for the budget with the REST route's
 * request hash (route `jobs`), so one payment creates one job on either transport and a replay by
 * its payer gets the same job; the job is stored and queued by `startPaidJob`, as on REST.
 * - Without `task`: the answer is a tool result, like every paid tool (PaymentRequired or a
 *   problem as `isError`; success: `{job_id, status: "queued", poll_url}` with
 *   `_meta["x402/payment-response"]`).
 * - With `task`: success is the `CreateTaskResult` `{task}` at once (`taskId`: the job id and its tag, `jobTaskId`) with
 *   the settlement in `_meta`. A CreateTaskResult cannot be an error, so an unpaid call is the
 *   JSON-RPC error x402's MCP transport defines (code 402, `data` = PaymentRequired), and a
 *   refused request a JSON-RPC error (`InvalidParams` for 4xx, `InternalError` for 5xx) whose
 *   `data` is the RFC 9457 problem.
 */
export async function callJobsTool(services: Services, call: JobsCall): Promise<CallToolResult | CreateTaskResult> {
  const fail = (body: Record<string, unknown>, meta?: Record<string, unknown>) => {
    if (!call.task) return problemResult(body, meta);
    const status = Number(body.status ?? 500);
    throw new McpError(status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, String(body.detail ?? 'The job could not start.'), {
      ...body,
      ...(meta ? { _meta: meta } : {}),
    });
  };
  const parsed = JobRequest.safeParse(call.args ?? {});
  if (!parsed.success) {
    return fail(
      problemDetails(400, 'Invalid arguments for gateway_jobs.', {
        errors: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message, code: i.code })),
      }),
    );
  }
  const input = parsed.data;
  let plan: ReturnType<typeof planJob>;
  try {
    plan = planJob(input, (id) => stepCapability({ services }, id));
  } catch (e) {
    if (e instanceof PlanError) return fail(problemDetails(e.status, e.message, { ...e.limit, errors: e.issues }));
    throw e;
  }
  const request = paidRequest(services, {
    path: MCP_PATH,
    route: JOBS_ROUTE,
    hashed: input,
    description: `Job budget of ${input.budget_usdc} USDC: ${input.objective.slice(0, 80)}`,
    price: plan.budget,
    extensions: jobsBazaar(),
    // as on REST: `upto` beside `exact`, the budget its ceiling, settled when the job ends
    schemes: JOB_SCHEMES,
    deferredMaxTimeoutSeconds: services.config.payment.jobUptoMaxTimeoutSeconds,
    paymentRequiredMessage:
      'Payment required: sign an x402 payment of the budget for one of `accepts` and call gateway_jobs again with the PaymentPayload in _meta["x402/payment"].',
    operationId: `job_${ulid()}`,
    payment: { payload: call.meta?.[PAYMENT_META] ?? null },
  });
  // a payer resending its settled payment proves itself with its bearer token, as on REST
  if (carriesPayment(request)) {
    const caller = await call.caller();
    if (caller.kind === 'wallet') request.caller = caller.address;
  }
  let fresh: JobCreated | undefined;
  const result = await payForCall(services.paywall, request, {
    run: async (payment) => {
      fresh = await startPaidJob(services, { jobId: payment.operationId, input, plan, payment });
      return { ok: true, status: 202, headers: { Location: fresh.poll_url }, body: fresh, ...(payment.deferred ? { settleLater: true } : {}) };
    },
  });
  if (result.kind === 'payment_required') {
    if (!call.task) return paymentRequiredResult(result.paymentRequired, result.body.reason);
    const data = result.body.reason ? { ...result.paymentRequired, reason: result.body.reason } : { ...result.paymentRequired };
    throw new McpError(X402_PAYMENT_REQUIRED_CODE, result.paymentRequired.error ?? 'Payment required', data);
  }
  if (result.kind === 'problem') return fail(result.error.body);
  const settle = result.settlement;
  if (result.status >= 400) return fail(result.body as Record<string, unknown>, settlementMeta(settle, { capability_id: gatewayJobs.id }));
  // the job this call created, or a replay's stored answer (written by this same code)
  const created = fresh && !result.replayed ? fresh : JobCreated.parse(result.body);
  const meta = settlementMeta(settle, { capability_id: gatewayJobs.id, job_id: created.job_id, ...(result.replayed ? { replayed: true } : {}) });
  if (!call.task) return toolResult(created, meta);
  const { store } = services.jobs;
  const job = await store.get(created.job_id);
  if (!job) throw new McpError(ErrorCode.InternalError, `The job ${created.job_id} was paid but its record is missing; it is recovered by the worker.`);
  const { _meta: progress, ...task } = jobTask(job, await jobTaskId(services, job.job_id), await store.cancelRequested(job.job_id));
  return { task, _meta: { ...meta, ...progress } };
}
