import { Executor, newExecutionId, resolveCapability, type ResolvedCapability } from '@acg/execution';
import { ExecuteRequest, ExecutionId, ExecutionRecord, ExecutionSucceeded } from '@acg/schemas';
import { z } from 'zod';
import type { Context } from '../trpc/context.js';
import { router } from '../trpc/init.js';
import type { PaidContext } from '../trpc/paid.js';
import { paidProcedure, publicProcedure } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';

/**
 * Resolves `capability_id` and validates `input` before any payment (SPEC 2.7; DESIGN "Errors"):
 * unknown id → 404, listed but not executable → 422, input not matching the capability's
 * input schema → 400 with each issue's path, precondition unmet (e.g. chain not configured) → 422.
 */
function resolveExecution(input: ExecuteRequest, ctx: Context): { capability: ResolvedCapability } {
  const resolved = resolveCapability(ctx.services.capabilities, input.capability_id, input.input, ctx.services.capabilityDeps);
  if (!resolved.ok) {
    const { error } = resolved;
    throw problem(error.status, error.shortMessage, error.issues ? { errors: error.issues.map((i) => ({ ...i, path: ['input', ...i.path] })) } : {});
  }
  return { capability: resolved };
}

/** Runs the capability once through the shared Executor and answers SPEC 2.7 (failures: problem+json, refunded). */
async function runExecution(ctx: Context & PaidContext & { capability: ResolvedCapability }) {
  if (ctx.replay) return ExecutionSucceeded.parse(ctx.replay);
  const payment = ctx.payment!;
  const { record, failure } = await new Executor(ctx.services).run(ctx.operationId, ctx.capability, {
    tx_hash: payment.txHash,
    amount: payment.amount,
    payer: payment.payer,
  });
  if (failure) {
    // RFC 9457 reserves `status` for the HTTP status: the execution's own status is `execution_status`.
    throw problem(failure.status >= 500 ? failure.status : 502, failure.message, {
      execution_id: record.execution_id,
      execution_status: 'FAILED',
      error: record.error,
      payment: record.payment,
    });
  }
  return { execution_id: record.execution_id, status: 'SUCCEEDED' as const, result: record.result!, payment: record.payment };
}

const ExecutionIdParam = z.object({ execution_id: ExecutionId });

/** `POST /api/v1/execute` (SPEC 4) and `GET /api/v1/executions/{execution_id}`. */
export const executeRouter = router({
  execute: paidProcedure({
    input: ExecuteRequest,
    prepare: resolveExecution,
    route: 'execute',
    path: '/api/v1/execute',
    price: (_input, ctx) => ctx.capability.price,
    description: (input) => `Execute ${input.capability_id}`,
    newOperationId: newExecutionId,
  })
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/execute',
        tags: ['execute'],
        summary: 'Execute a capability, paid per call with x402',
        description:
          'Without payment the answer is 402 with a PAYMENT-REQUIRED header (x402 v2) and SPEC 2.9 fields in the body. Retry with PAYMENT-SIGNATURE (or legacy X-PAYMENT): the gateway verifies, settles on-chain (USDC, EIP-3009 transferWithAuthorization) and executes once. A replayed payment or Idempotency-Key returns the stored execution. A failure after settlement is refunded.',
        requestHeaders: z.object({
          'PAYMENT-SIGNATURE': z.string().optional().describe('base64 JSON x402 PaymentPayload (v2)'),
          'X-PAYMENT': z.string().optional().describe('legacy header: base64 JSON PaymentPayload (v1 or v2)'),
          'Idempotency-Key': z.string().optional().describe('replays the stored execution for the same body'),
        }),
        responseHeaders: z.object({ 'PAYMENT-RESPONSE': z.string().describe('base64 JSON x402 SettleResponse') }),
        errorResponses: {
          400: 'Invalid input (problem+json with errors)',
          402: 'Payment required (x402 challenge)',
          404: 'Unknown capability',
          409: 'Payment already used for another request, or in progress',
          422: 'Capability not executable',
          502: 'Capability failed after payment; refunded',
          503: 'Upstream unavailable; refunded when paid',
        },
      },
    })
    .output(ExecutionSucceeded)
    .mutation(({ ctx }) => runExecution(ctx)),

  getExecution: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/executions/{execution_id}',
        tags: ['execute'],
        summary: 'Read an execution and its refund state',
        errorResponses: { 400: 'Malformed id', 404: 'Unknown execution' },
      },
    })
    .input(ExecutionIdParam)
    .output(ExecutionRecord)
    .query(async ({ ctx, input }) => {
      const record = await ctx.services.executions.get(input.execution_id);
      if (!record) throw problem(404, `No execution ${input.execution_id}.`);
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      return record;
    }),
});
