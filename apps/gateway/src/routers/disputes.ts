import { DisputeError } from '@acg/provider-ledger';
import { DisputeId, DisputeOpenRequest, DisputeResolveRequest, DisputeResponseRequest, DisputeView, ExecutionId } from '@acg/schemas';
import type { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { router } from '../trpc/init.js';
import { adminProcedure, bearerOrAdminProcedure, bearerProcedure, domainErrors } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';

/** The RFC 9457 problem of a refused dispute operation: `not_found` 404 (never saying whether it exists), the others 409. */
function disputeProblem(e: unknown): TRPCError | undefined {
  if (!(e instanceof DisputeError)) return undefined;
  return problem(e.reason === 'not_found' ? 404 : 409, e.shortMessage, { reason: e.reason, ...(e.disputeId ? { dispute_id: e.disputeId } : {}) });
}

/** Dispute procedures: never cached, {@link DisputeError} mapped to problems (as the wallet monitor maps its errors). */
const payerOrProviderProcedure = bearerProcedure.use(domainErrors(disputeProblem));
const adminDisputeProcedure = adminProcedure.use(domainErrors(disputeProblem));

const DisputeIdParam = z.object({ dispute_id: DisputeId.describe('dispute id, dsp_ + ULID') });

const errors = {
  400: 'Invalid body or malformed id (problem+json with errors)',
  401: 'Missing, invalid or expired bearer token',
  404: 'Unknown dispute, or not yours',
  409: 'The dispute is resolved already',
};

/**
 * Disputes of provider executions (docs/decisions.md "Providers": disputes). The money moves are
 * @acg/provider-ledger's: opening keeps the provider's share held; `refund` cancels share and fee
 * and refunds the buyer the full price on-chain (the refund queue of @acg/payments, operation id =
 * the dispute id); `release` makes the share available. Someone who is neither the buyer, the
 * provider nor the admin gets 404, never a hint that the dispute or execution exists.
 */
export const disputesRouter = router({
  open: payerOrProviderProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/executions/{execution_id}/dispute',
        tags: ['providers'],
        summary: "Dispute a provider execution you paid for, within the provider's dispute window",
        description:
          "Bearer token of the paying address (Sign-In with Ethereum). Only for a SUCCEEDED provider execution whose dispute window (PROVIDER_DISPUTE_WINDOW_SECONDS) has not passed; one dispute per execution. While the dispute is open the provider's share stays held. Answers 201 with the dispute.",
        protect: true,
        successDescription: '201 Created: the dispute (status "open"), with a Location to read it',
        errorResponses: {
          400: errors[400],
          401: errors[401],
          404: 'Unknown execution, not a provider execution, or not paid by you',
          409: 'The dispute window has passed, or the execution is disputed already',
        },
      },
    })
    .input(DisputeOpenRequest.extend({ execution_id: ExecutionId }))
    .output(DisputeView)
    .mutation(async ({ ctx, input }) => {
      const dispute = await ctx.services.providerLedger.openDispute({ execution_id: input.execution_id, payer: ctx.account, reason: input.reason });
      ctx.response.status = 201;
      ctx.responseHeaders.Location = `${ctx.services.publicBaseUrl()}/api/v1/disputes/${dispute.dispute_id}`;
      return dispute;
    }),

  respond: payerOrProviderProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/disputes/{dispute_id}/response',
        tags: ['providers'],
        summary: "The provider's statement on an open dispute",
        description:
          "Bearer token of the provider's payout address. A later statement replaces the earlier one while the dispute is open. A dispute left open for PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS is released if the provider answered, refunded if not.",
        protect: true,
        errorResponses: errors,
      },
    })
    .input(DisputeResponseRequest.extend(DisputeIdParam.shape))
    .output(DisputeView)
    .mutation(({ ctx, input }) =>
      ctx.services.providerLedger.respondToDispute({ dispute_id: input.dispute_id, provider_address: ctx.account, statement: input.statement }),
    ),

  resolve: adminDisputeProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/disputes/{dispute_id}/resolve',
        tags: ['providers'],
        summary: 'Resolve an open dispute (admin): refund the buyer, or release the share to the provider',
        description:
          "Authorization: Bearer <ADMIN_TOKEN>; without ADMIN_TOKEN configured this route does not exist (404). `refund`: the provider's share and the gateway's fee are cancelled and the buyer is refunded the full price on-chain (USDC from the treasury; `refund` shows `pending`, then `sent` with its tx_hash). `release`: the share becomes available to the provider at once.",
        protect: true,
        errorResponses: { 400: errors[400], 401: 'Missing or wrong admin token', 404: 'Unknown dispute (or no ADMIN_TOKEN configured)', 409: errors[409] },
      },
    })
    .input(DisputeResolveRequest.extend(DisputeIdParam.shape))
    .output(DisputeView)
    .mutation(({ ctx, input }) => ctx.services.providerLedger.resolveDispute({ dispute_id: input.dispute_id, outcome: input.outcome, by: 'admin' })),

  get: bearerOrAdminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/disputes/{dispute_id}',
        tags: ['providers'],
        summary: 'A dispute, for its buyer, its provider or the admin',
        description: "Bearer token of the buyer's or the provider's address, or the admin token. Shows the refund's state once refunded.",
        protect: true,
        errorResponses: { 400: errors[400], 401: errors[401], 404: errors[404] },
      },
    })
    .input(DisputeIdParam)
    .output(DisputeView)
    .query(async ({ ctx, input }) => {
      const stored = await ctx.services.providerLedger.dispute(input.dispute_id);
      const caller = ctx.account?.toLowerCase();
      const allowed = stored && (ctx.admin || caller === stored.view.payer.toLowerCase() || caller === stored.provider_address.toLowerCase());
      if (!allowed) throw problem(404, `No dispute ${input.dispute_id}.`, { reason: 'not_found' });
      // evidence from both sides: the result, the gateway's proof of it, the provider's signature over it
      const execution = await ctx.services.executions.get(stored.view.execution_id);
      if (!execution) return stored.view;
      return {
        ...stored.view,
        evidence: {
          result: execution.result,
          ...(execution.proof ? { proof: execution.proof } : {}),
          ...(execution.provider_signature ? { provider_signature: execution.provider_signature } : {}),
        },
      };
    }),
});
