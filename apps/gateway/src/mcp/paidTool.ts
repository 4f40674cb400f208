import type { ExecutableCapability } from '@acg/capabilities';
import { Executor, newExecutionId } from '@acg/execution';
import { inputJsonSchema, outputJsonSchema } from '@acg/registry';
import { mcpToolName, Routing, type ExecutionSucceeded } from '@acg/schemas';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { exampleInput, exampleResult, mcpBazaar } from '../paidRoute/bazaar.js';
import { EXECUTE_ROUTE, executeDescription, paidOutcome, resolveExecution, runPaidExecution, type PaidExecutionResult } from '../paidRoute/execution.js';
import { carriesPayment, paidRequest, payForCall } from '../paidRoute/paidCall.js';
import { executionSchemes, routeExecution } from '../paidRoute/routing.js';
import { problemDetails } from '../trpc/problem.js';
import { accountOf, bearerIdentity } from '../caller.js';
import type { Services } from '../services.js';
import { PAYMENT_META, paymentRequiredResult, problemResult, settlementMeta, toolResult } from './results.js';

/** Path of the MCP endpoint, the `resource.url` of its PaymentRequired. */
export const MCP_PATH = '/mcp';

const bazaarCache = new WeakMap<ExecutableCapability, Record<string, unknown>>();

/** `{bazaar}` of a capability's MCP tool: tool name, input schema and example, result schema and example (built once per definition). */
export function toolBazaar(d: ExecutableCapability): Record<string, unknown> {
  let hit = bazaarCache.get(d);
  if (!hit) {
    hit = mcpBazaar({
      toolName: mcpToolName(d.id),
      description: d.description,
      input: { schema: inputJsonSchema(d) ?? { type: 'object' }, example: exampleInput(d) },
      output: { schema: outputJsonSchema(d) ?? { type: 'object' }, example: exampleResult(d) },
    });
    bazaarCache.set(d, hit);
  }
  return hit;
}

/**
 * Calls a capability's paid tool (x402 transports-v2/mcp.md; docs/decisions.md "Agents: MCP and x402
 * extensions"), through the same path as `POST /api/v1/execute`: the arguments are resolved and
 * validated before any payment (400 / 422 tool error); then {@link payForCall} with the payment
 * from `_meta["x402/payment"]`: none → PaymentRequired (isError, `structuredContent` and
 * `content[0].text`); refused → the same with the reason; valid → reserve, settle (verify first in the `authorization` flow), run
 * once, record. The 402 offers the schemes `POST /api/v1/execute` offers for the same call
 * (`executionSchemes`): `upto` after `exact` when the route's offers ask different prices, the
 * route's highest price its ceiling; paid that way only the answering offer's price is settled
 * (`Paywall.settleUsed` in `runPaidExecution`, no refund transaction) and `_meta` names that
 * settlement. The paywall's route and request hash are those of `POST /api/v1/execute` with
 * `{capability_id, input: arguments}`, so one payment buys one execution on either transport and a
 * replay by the payer (or a concurrent duplicate) gets the stored execution. Success: `structuredContent` = the
 * capability's result, `_meta` = `{"x402/payment-response": SettleResponse, capability_id,
 * execution_id, payment: {tx_hash, amount}, proof}` (`proof`: the execution's JWS). A failure after settlement is refunded and answered
 * as an isError problem (with `execution_id`, `refund`) plus the settlement; a conflict
 * (payment or payment identifier reused) is an isError 409 problem with its `reason`. A settled
 * payment resent without proof of being its payer (its payment-identifier, or the payer's bearer
 * token in `authorization`, the HTTP Authorization header) is an isError 409 `payment_already_used`
 * receipt, never the result.
 */
export async function callCapabilityTool(
  services: Services,
  d: ExecutableCapability,
  args: unknown,
  meta: Record<string, unknown> | undefined,
  authorization?: string,
): Promise<CallToolResult> {
  const input = args ?? {};
  const found = resolveExecution(services, d.id, input);
  if (!found.ok) return problemResult(found.body);
  // `_meta.routing`: the same routing as REST's body field (docs/marketplace.md "Routing")
  const routing = meta?.routing === undefined ? undefined : Routing.safeParse(meta.routing);
  if (routing && !routing.success) {
    return problemResult(
      problemDetails(400, '_meta.routing is not a valid routing object.', {
        errors: routing.error.issues.map((i) => ({ path: ['_meta', 'routing', ...i.path.map(String)], message: i.message, code: i.code })),
      }),
    );
  }
  const routed = await routeExecution(services, found, routing?.data);
  if (!routed.ok) return problemResult(routed.body);
  const resolved = routed.capability;
  const operationId = newExecutionId();
  const request = paidRequest(services, {
    path: MCP_PATH,
    route: EXECUTE_ROUTE,
    hashed: { capability_id: d.id, input, ...(routing ? { routing: routing.data } : {}) },
    description: executeDescription(d.id),
    price: resolved.price,
    extensions: toolBazaar(d),
    // the schemes of `POST /api/v1/execute` for the same call (docs/decisions.md "Payment schemes"):
    // `upto` after `exact` on a route whose offers ask different prices (the route's highest price the
    // ceiling, the answering offer's price settled by `runPaidExecution`), `batch-settlement` after
    // `exact` where the price is fixed before the voucher is signed (when PAYMENT_SCHEMES accepts it)
    schemes: executionSchemes(resolved),
    paymentRequiredMessage:
      'Payment required: sign an x402 payment for one of `accepts` (`exact`; `upto` where offered, settled for what the call used; a `batch-settlement` voucher where offered) and call the tool again with the PaymentPayload in _meta["x402/payment"].',
    operationId,
    // null: no payment (answered with the challenge); never read from HTTP headers here
    payment: { payload: meta?.[PAYMENT_META] ?? null },
  });
  // a payer resending its settled payment proves itself with its bearer token, as on REST: the one
  // identity step (its Bearer part: MCP has no tRPC context), leniently: a bad token, or a token store that
  // does not answer, is no caller and never blocks the payment
  if (carriesPayment(request)) request.caller = accountOf(await bearerIdentity(services, authorization).catch(() => undefined));
  // one Executor for the call: a read-only capability starts while its payment settles (as on REST), released after settlement
  const executor = new Executor(services);
  let fresh: PaidExecutionResult | undefined;
  const result = await payForCall(services.paywall, request, {
    early: (payer, executionId) => executor.startEarly(resolved, { executionId, payer }),
    run: async (payment, early) => {
      fresh = await runPaidExecution(services, payment.operationId, resolved, payment, early, executor);
      return paidOutcome(fresh);
    },
  });
  if (result.kind === 'payment_required') return paymentRequiredResult(result.paymentRequired, result.body.reason);
  if (result.kind === 'problem') return problemResult(result.error.body);
  const settle = result.settlement;
  if (result.status >= 400) return problemResult(result.body as Record<string, unknown>, settlementMeta(settle, { capability_id: d.id }));
  // the answer this call produced, or a replay's stored one (written by this same code)
  const execution = fresh?.ok && !result.replayed ? fresh.body : (result.body as ExecutionSucceeded);
  return toolResult(
    execution.result,
    settlementMeta(settle, {
      capability_id: d.id,
      execution_id: execution.execution_id,
      payment: execution.payment,
      // the JWS proof of the execution (docs/decisions.md "Proofs and receipts"), as REST answers it
      ...(execution.proof ? { proof: execution.proof } : {}),
      // an offered capability: who answered, what was tried, and the refund of the rest (docs/marketplace.md)
      ...(execution.provider ? { provider: execution.provider, attempts: execution.attempts } : {}),
      ...(execution.refund ? { refund: execution.refund } : {}),
      ...(result.replayed ? { replayed: true } : {}),
    }),
  );
}
