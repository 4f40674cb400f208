import { CapabilityResolutionError, checkPrecondition, executableDefinition, parseCapabilityInput } from '@acg/execution';
import { readRefund, settlementState } from '@acg/treasury';
import { accountOf, bearerIdentity } from '../caller.js';
import { cancelEffect, jobView, planJob, PlanError } from '@acg/jobs';
import { JobCreated, JobId, JobRecord, JobRequest, JobStatus } from '@acg/schemas';
import { ulid } from 'ulid';
import { hashMessage, recoverAddress } from 'viem';
import { z } from 'zod';
import { gatewayJobs } from '@acg/capabilities';
import { startPaidJob } from '../jobs/startJob.js';
import { routeBazaar } from '../paidRoute/bazaar.js';
import { header, type Context } from '../trpc/context.js';
import { router } from '../trpc/init.js';
import { paidBy, paidProcedure, payerProcedure, payerReadOpenApi, publicProcedure } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';

const JobIdParam = z.object({ job_id: JobId });

/** Resolves a capability for job steps: executable in-process, with its price and input schema. */
export function stepCapability(ctx: Pick<Context, 'services'>, id: string) {
  const definition = executableDefinition(ctx.services.catalog.list(), id);
  if (definition instanceof CapabilityResolutionError) return undefined;
  return {
    price: definition.price.base_units,
    parseInput: (input: unknown) => {
      const r = parseCapabilityInput(definition, input);
      return r.ok
        ? ({ success: true, data: r.input } as const)
        : ({ success: false, issues: r.error.issues!.map((i) => ({ path: i.path, message: i.message })) } as const);
    },
    precondition: (input: unknown) => checkPrecondition(definition, input, ctx.services.capabilityDeps)?.shortMessage,
    acceptsObjective: definition.accepts_objective === true,
  };
}

/** Validates the plan before any payment (400/422 problem+json, nothing charged). */
function validatePlan(input: JobRequest, ctx: Context): { plan: ReturnType<typeof planJob> } {
  try {
    return { plan: planJob(input, (id) => stepCapability(ctx, id)) };
  } catch (e) {
    if (e instanceof PlanError) throw problem(e.status, e.message, { ...e.limit, errors: e.issues });
    throw e;
  }
}

/** The x402 schemes of a job's 402 (docs/decisions.md "Payment schemes"): `exact` first, then `upto` with the budget as its ceiling. */
export const JOB_SCHEMES = ['exact', 'upto'] as const;

/** The message a payer signs (EIP-191 personal_sign) to cancel without a bearer token. */
export const cancelMessage = (jobId: string) => `Cancel job ${jobId}`;

/** Asynchronous jobs with a USDC budget (docs/spec-notes.md 2.8, 4; docs/decisions.md "Jobs"). */
export const jobsRouter = router({
  create: paidProcedure({
    input: JobRequest,
    prepare: validatePlan,
    route: 'jobs',
    path: '/api/v1/jobs',
    price: (input) => BigInt(Math.round(input.budget_usdc * 1e6)),
    description: (input) => `Job budget of ${input.budget_usdc} USDC: ${input.objective.slice(0, 80)}`,
    extensions: () => routeBazaar(gatewayJobs),
    // x402 `upto` beside `exact`: the budget is the ceiling, and the job settles what its steps spent when it ends
    schemes: () => JOB_SCHEMES,
    settlesLater: { deferredMaxTimeoutSeconds: (ctx) => ctx.services.config.payment.jobUptoMaxTimeoutSeconds },
    newOperationId: () => `job_${ulid()}`,
  })
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/jobs',
        tags: ['jobs'],
        summary:
          'Create a job paid with x402: `exact` pays the whole budget (the unspent part is refunded when it ends), `upto` authorizes it and settles what the steps spent',
        description:
          'Validates the plan first (unknown or non-executable capabilities, steps outside `capabilities`, inputs, budget below the cheapest step: 400/422; at most 50 capabilities, 100 steps, an objective of 4000 characters: 422 naming the `limit`; a step input over 64 KiB of JSON: 413; nothing charged), then asks for the budget through x402 (`accepts`: `exact` first, then `upto` with the budget as its ceiling and a longer window, JOB_UPTO_MAX_TIMEOUT_SECONDS), then answers 202 with a Location to poll. A job paid with `upto` settles only what its steps spent when it ends (nothing when they spent nothing), with no refund transaction; its 202 has no PAYMENT-RESPONSE (the job record shows the settlement).',
        requestHeaders: z.object({
          'PAYMENT-SIGNATURE': z.string().optional(),
          'Idempotency-Key': z.string().optional(),
        }),
        successDescription: '202 Accepted: {job_id, status: "queued", poll_url}',
        errorResponses: {
          400: 'Bad request',
          402: 'Payment required (x402 challenge for budget_usdc)',
          409: 'Payment or Idempotency-Key reused',
          413: 'A step input is over its size limit (`limit: "step_input_bytes"`, `max`)',
          422: 'Plan cannot run, or a count or length over its limit (`limit`: `capabilities`, `steps`, `objective`; `max`)',
        },
      },
    })
    .output(JobCreated)
    .mutation(async ({ ctx, input }) => {
      if (ctx.replay) return JobCreated.parse(ctx.replay);
      const created = await startPaidJob(ctx.services, { jobId: ctx.operationId, input, plan: ctx.plan, payment: ctx.payment! });
      ctx.response.status = 202;
      ctx.responseHeaders.Location = created.poll_url;
      return created;
    }),

  get: payerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/jobs/{job_id}',
        tags: ['jobs'],
        summary: 'Poll a job: its steps, results, proofs, spend and refund (the payer only)',
        description:
          'Read as an execution is (GET /api/v1/executions/{execution_id}): by the address that paid the budget, signed in with its bearer token (Sign-In with Ethereum: POST /v1/auth/nonce, POST /v1/auth/token) or x402 sign-in-with-x. Without credentials the answer is 402 whose PAYMENT-REQUIRED carries extensions["sign-in-with-x"] (a CAIP-122 challenge for this URL; nothing to pay); retry with SIGN-IN-WITH-X and the answer carries a bearer token in Authentication-Info. Anyone else gets 404, as for an unknown job: the job id appears in receipts (409 payment_already_used), so it is not a read capability.',
        ...payerReadOpenApi,
        errorResponses: {
          400: 'Malformed id',
          401: 'Invalid bearer token, or a refused sign-in-with-x proof',
          402: 'No credentials: PAYMENT-REQUIRED with a sign-in-with-x challenge (nothing to pay)',
          404: 'Unknown job, or paid by another address',
        },
      },
    })
    .input(JobIdParam)
    .output(JobRecord)
    .query(async ({ ctx, input }) => {
      const { store } = ctx.services.jobs;
      const job = await store.get(input.job_id);
      // another payer's job is as unknown as a missing one (its steps, results and proofs are the payer's)
      if (!job || !paidBy(ctx.account, job.payer)) throw problem(404, `No job ${input.job_id} paid by this account.`);
      const [refund, cancel, settlement] = await Promise.all([
        readRefund(ctx.services.redis, ctx.services.keys, job.job_id),
        store.cancelRequested(job.job_id),
        // the budget payment as the chain has it: settled → final, or unpaid (reorged out for good: no results)
        settlementState(ctx.services.redis, ctx.services.keys, job.job_id),
      ]);
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      return jobView(job, refund, cancel, settlement);
    }),

  cancel: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/jobs/{job_id}/cancel',
        tags: ['jobs'],
        summary: 'Cancel a job before its next step (payer only: bearer token of the payer, or an EIP-191 signature of "Cancel job <job_id>")',
        errorResponses: {
          401: 'No proof of the payer',
          403: 'Not the payer',
          404: 'Unknown job',
          409: 'Job already ended (reason job_ended), or its last step is running and nothing is left to cancel (reason cancel_too_late)',
        },
      },
    })
    .input(
      JobIdParam.extend({
        signature: z
          .string()
          .regex(/^0x[0-9a-fA-F]{130}$/, 'must be a 65-byte hex signature')
          .optional(),
      }),
    )
    .output(z.object({ job_id: JobId, status: JobStatus, cancel_requested: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const { store } = ctx.services.jobs;
      const job = await store.get(input.job_id);
      if (!job) throw problem(404, `No job ${input.job_id}.`);
      let caller: string | undefined;
      // the one identity step's Bearer part: a header that is malformed, or a token that does not resolve, is a 401
      const bearer = await bearerIdentity(ctx.services, header(ctx, 'authorization')).catch(() => ({ kind: 'refused' as const, detail: '' }));
      if (bearer !== undefined) {
        caller = accountOf(bearer);
        if (!caller) throw problem(401, 'The bearer token is invalid or expired.', {}, { 'WWW-Authenticate': 'Bearer realm="gateway"' });
      } else if (input.signature) {
        caller = await recoverAddress({ hash: hashMessage(cancelMessage(job.job_id)), signature: input.signature as `0x${string}` }).catch(() => undefined);
      } else {
        throw problem(401, `Prove you are the payer: Authorization: Bearer <token>, or "signature" = personal_sign of "${cancelMessage(job.job_id)}".`);
      }
      if (!caller || caller.toLowerCase() !== job.payer.toLowerCase()) throw problem(403, 'Only the wallet that paid the budget can cancel this job.');
      const effect = cancelEffect(job);
      if (effect === 'ended') throw problem(409, `The job already ended (${job.status}).`, { reason: 'job_ended', job_status: job.status });
      if (effect === 'too_late') {
        throw problem(409, "Too late to cancel: the job's last step is running; the job ends as that step ends and is charged for what ran.", {
          reason: 'cancel_too_late',
          job_status: job.status,
        });
      }
      await store.requestCancel(job.job_id);
      ctx.response.status = 202;
      return { job_id: job.job_id, status: job.status, cancel_requested: true as const };
    }),
});
