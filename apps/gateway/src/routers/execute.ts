import { Executor, newExecutionId } from '@acg/execution';
import { settlementState } from '@acg/treasury';
import type { StoredQuote } from '@acg/provider-directory';
import { ExecuteRequest, ExecutionId, ExecutionRecord, ExecutionSucceeded } from '@acg/schemas';
import { z } from 'zod';
import { executeBazaar } from '../paidRoute/bazaar.js';
import { executionSchemes, routeExecution, type RoutedCapability } from '../paidRoute/routing.js';
import { EXECUTE_ROUTE, executeDescription, resolveExecution, runPaidExecution } from '../paidRoute/execution.js';
import { carriedAuthorization, quotedExecution } from '../paidRoute/quotes.js';
import { header } from '../trpc/context.js';
import type { Context } from '../trpc/context.js';
import { router } from '../trpc/init.js';
import type { PaidContext } from '../trpc/paid.js';
import { paidBy, paidProcedure, payerProcedure, payerReadOpenApi } from '../trpc/procedures.js';
import { problem, rawError } from '../trpc/problem.js';

/**
 * Resolves `capability_id`, validates `input` and applies `routing` before any payment
 * ({@link resolveExecution}: 404 / 422 / 400 / 422; {@link routeExecution}: 422 `no_route`, 503
 * `offer_suspended` when every fitting offer is suspended); with `quote_id`, checks the quote and
 * prices the call at the quoted price on the quoted provider ({@link quotedExecution}: 404 / 409 / 410).
 */
async function prepareExecution(
  input: ExecuteRequest,
  ctx: Context,
): Promise<{ capability: RoutedCapability; executor: Executor; quote?: StoredQuote; quotePayment?: string }> {
  const resolved = resolveExecution(ctx.services, input.capability_id, input.input);
  if (!resolved.ok) throw rawError(resolved.status, resolved.body);
  if (input.quote_id) {
    const payment = carriedAuthorization(ctx.services, (name) => header(ctx, name));
    const quoted = await quotedExecution(ctx.services, resolved, input.quote_id, input.input, payment);
    if (!quoted.ok) throw rawError(quoted.status, quoted.body);
    return { capability: quoted.capability, executor: new Executor(ctx.services), quote: quoted.quote, quotePayment: payment };
  }
  const routed = await routeExecution(ctx.services, resolved, input.routing);
  if (!routed.ok) throw rawError(routed.status, routed.body);
  // one Executor for the call: the early start and the run
  return { capability: routed.capability, executor: new Executor(ctx.services) };
}

/**
 * Runs the capability once through the shared Executor and answers docs/spec-notes.md 2.7 (failures: problem+json, refunded).
 * A quoted call first uses its quote up (atomically, by this execution id and its payment): a used
 * quote is refused before payment ({@link prepareExecution}); an execution that raced past that
 * check finds it used here and is refused 409 `quote_used`, its payment refunded, so a quote never charges twice.
 */
async function runExecution(ctx: Context & PaidContext & { capability: RoutedCapability; executor: Executor; quote?: StoredQuote; quotePayment?: string }) {
  if (ctx.replay) return ExecutionSucceeded.parse(ctx.replay);
  if (ctx.quote && !(await ctx.services.providers.quotes.use(ctx.quote.quote_id, ctx.operationId, ctx.quotePayment ?? ''))) {
    throw problem(409, 'The quote has been used by another execution; this payment is refunded.', { reason: 'quote_used', quote_id: ctx.quote.quote_id });
  }
  // a quoted call settles the quoted price (the whole authorized amount), whatever the offer asks now
  const capability = ctx.quote ? { ...ctx.capability, fixedCharge: true } : ctx.capability;
  const r = await runPaidExecution(ctx.services, ctx.operationId, capability, ctx.payment!, ctx.early, ctx.executor);
  if (!r.ok) throw rawError(r.status, r.body);
  return r.body;
}

const ExecutionIdParam = z.object({ execution_id: ExecutionId });

/** `POST /api/v1/execute` (docs/spec-notes.md 4) and `GET /api/v1/executions/{execution_id}`. */
export const executeRouter = router({
  execute: paidProcedure({
    input: ExecuteRequest,
    prepare: prepareExecution,
    route: EXECUTE_ROUTE,
    path: '/api/v1/execute',
    price: (_input, ctx) => ctx.capability.price,
    description: (input) => executeDescription(input.capability_id),
    // Bazaar: this capability's input and output schemas (docs/decisions.md "Agents: MCP and x402 extensions")
    extensions: (_input, ctx) => executeBazaar(ctx.capability.definition),
    // x402 `upto` beside `exact` where the cost is known only afterwards: a route whose offers ask
    // different prices (settles the answering offer's price), or a quote (settles the quoted price).
    // x402 `batch-settlement` beside `exact` where the price is fixed before the voucher is signed:
    // the gateway's own capabilities, a route whose offers all ask one price, a quote; offered when
    // PAYMENT_SCHEMES accepts it. A provider's share of a voucher is credited from claimed funds only
    // (docs/decisions.md "batch-settlement").
    schemes: (_input, ctx) => executionSchemes(ctx.capability, ctx.quote !== undefined),
    newOperationId: newExecutionId,
    // a read-only capability runs while its payment settles; its result is released after settlement
    // (not a quoted call: its quote is used up first, after settlement)
    early: (_input, ctx, call) => (ctx.quote ? undefined : ctx.executor.startEarly(ctx.capability, call)),
  })
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/execute',
        tags: ['execute'],
        summary: 'Execute a capability, paid per call with x402',
        description:
          "Without payment the answer is 402 with a PAYMENT-REQUIRED header (x402 v2) and docs/spec-notes.md 2.9 fields in the body; its `extensions` carry `bazaar` (this capability's input and output schemas) and `payment-identifier`. Retry with PAYMENT-SIGNATURE (or legacy X-PAYMENT): the gateway reserves the authorization, settles it on-chain (USDC, EIP-3009 transferWithAuthorization; the settlement verifies and simulates it first: x402 paymentFlow upfront) and executes once. A settled payment sent again returns the stored execution to its payer only (proved by the payment identifier it was first sent with, or the payer's bearer token); anyone else gets 409 payment_already_used with the execution id, tx hash and result_url (GET /api/v1/executions/{id} with the payer's token). Idempotency-Key is per payer and read after the payment: the payer's fresh signed authorization with the same key and body replays the stored execution without being charged; a payment identifier reused with another payment is 409. A failure after settlement is refunded. When the operator accepts x402 `batch-settlement` (PAYMENT_SCHEMES), `accepts` also offers it after `exact` (and `upto`) wherever the price is fixed before the call (built-in capabilities, a route whose offers all ask one price, a quoted call): one deposit opens a channel, then each call carries a cumulative voucher checked off-chain (no transaction; the execution's payment has no tx_hash); a failed call is not charged and the same voucher may be sent again; a provider's share of a voucher is credited only once the channel is claimed and settled on chain. With quote_id (POST /api/v1/quotes) the 402 asks exactly the quoted price and the call runs once on the quoted provider (404 quote_not_found, 409 quote_input_mismatch / quote_used, 410 quote_expired). An offer whose trust score fell under the routing threshold is refused before payment (503 offer_suspended; docs/trust-v1.md). A capability offered by several providers (docs/marketplace.md) takes an optional `routing` {max_price_usdc, prefer: cheapest|fastest|trusted, providers, exclude}: the 402 asks for the highest price among the offers the route may use, offers are tried in order until one answers validly, and the payment minus the answering offer's price is refunded on-chain (`refund` on the answer, which names `provider` and `attempts`). When those offers ask different prices, and for a quoted call, `accepts` also offers x402 `upto` after `exact` (Permit2, the same amount as a ceiling; the payer needs a Permit2 allowance on USDC): paid that way, only the answering offer's price (a quote: the quoted price) is settled, once, after the call answered, and nothing is refunded; a failed call settles nothing.",
        requestHeaders: z.object({
          'PAYMENT-SIGNATURE': z.string().optional().describe('base64 JSON x402 PaymentPayload (v2)'),
          'X-PAYMENT': z.string().optional().describe('legacy header: base64 JSON PaymentPayload (v1 or v2)'),
          'Idempotency-Key': z.string().optional().describe("per payer: with the payer's payment, replays the stored execution for the same body"),
        }),
        responseHeaders: z.object({ 'PAYMENT-RESPONSE': z.string().describe('base64 JSON x402 SettleResponse') }),
        errorResponses: {
          400: 'Invalid input (problem+json with errors)',
          402: 'Payment required (x402 challenge)',
          404: 'Unknown capability, or unknown quote_id (quote_not_found)',
          410: 'The quote has expired (quote_expired)',
          409: 'Quote for another capability or input, used by another execution, or its provider gone (quote_*); payment already used (for another request, or resent without proof of being the payer: the receipt), Idempotency-Key or payment identifier reused, or in progress',
          422: 'Capability not executable, or no offer fits `routing` (reason no_route)',
          502: 'Capability failed after payment; refunded',
          503: 'Upstream unavailable; refunded when paid. The offer is suspended from routing (offer_suspended: trust score under the threshold). payment_chain_unavailable: the payment chain is unreachable (payment.status not_charged or unknown). settlement_pending: the settlement is broadcast but not confirmed yet (payment: {status: unknown, tx_hash, authorization: {from, nonce}}); retry later with the same payment',
        },
      },
    })
    .output(ExecutionSucceeded)
    .mutation(({ ctx }) => runExecution(ctx)),

  getExecution: payerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/executions/{execution_id}',
        tags: ['execute'],
        summary: 'Read an execution, its proof and its refund state (the payer only)',
        description:
          'The address that paid, signed in either way: its bearer token (Sign-In with Ethereum: POST /v1/auth/nonce, POST /v1/auth/token), or x402 sign-in-with-x: without credentials the answer is 402 whose PAYMENT-REQUIRED carries extensions["sign-in-with-x"] (a CAIP-122 challenge for this URL); retry with SIGN-IN-WITH-X (base64 JSON of the signed challenge, single use) and the answer carries a bearer token in Authentication-Info. Anyone else gets 404, as for an unknown id.',
        ...payerReadOpenApi,
        errorResponses: {
          400: 'Malformed id',
          401: 'Invalid bearer token, or a refused sign-in-with-x proof (reason: wrong_domain, wrong_chain, expired, bad_signature, nonce_used, ...)',
          402: 'No credentials: PAYMENT-REQUIRED with a sign-in-with-x challenge (nothing to pay)',
          404: 'Unknown execution, or paid by another address',
        },
      },
    })
    .input(ExecutionIdParam)
    .output(ExecutionRecord)
    .query(async ({ ctx, input }) => {
      const record = await ctx.services.executions.get(input.execution_id);
      // another payer's execution is as unknown as a missing one (its result and proof are the payer's)
      if (!record || !paidBy(ctx.account, record.payer)) throw problem(404, `No execution ${input.execution_id} paid by this account.`);
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      // the settlement as the chain has it: settled → final, or unpaid (reorged out for good: no result)
      const settlement = await settlementState(ctx.services.redis, ctx.services.keys, record.execution_id);
      if (!settlement) return record;
      const payment = { ...record.payment, ...settlement };
      if (settlement.status !== 'unpaid') return { ...record, payment };
      const { proof: _proof, ...unpaid } = record;
      return { ...unpaid, result: null, payment };
    }),
});
