import type { ShareEarnings } from '@acg/capabilities';
import { recordChannelCredit } from '@acg/channels';
import { Executor, resolveCapability, type EarlyRun, type ExecutionCharge, type ResolvedCapability } from '@acg/execution';
import type { Outcome, SettledPayment } from '@acg/payments';
import { retryWhileRedisUnavailable } from '@acg/redis';
import type { ExecutionRecord, ExecutionSucceeded } from '@acg/schemas';
import type { Services } from '../services.js';
import { problemDetails, type Problem } from '../trpc/problem.js';

/** A capability that cannot run here, refused before any payment: 400 / 404 / 422 problem. */
export interface ExecutionRefusal {
  ok: false;
  status: number;
  body: Problem;
}

/**
 * Resolves `capabilityId` and parses `input` once, before any payment (docs/spec-notes.md 2.7; docs/decisions.md "Errors"),
 * shared by `POST /api/v1/execute` and MCP tools: unknown id → 404, listed but not executable →
 * 422, input not matching the capability's input schema → 400 with each issue's path under
 * `input`, precondition unmet (e.g. chain not configured) → 422. Reads the catalog as it is now.
 */
export function resolveExecution(services: Services, capabilityId: string, input: unknown): ({ ok: true } & ResolvedCapability) | ExecutionRefusal {
  const resolved = resolveCapability(services.catalog.list(), capabilityId, input, services.capabilityDeps);
  if (resolved.ok) return resolved;
  const { error } = resolved;
  return {
    ok: false,
    status: error.status,
    body: problemDetails(error.status, error.shortMessage, error.issues ? { errors: error.issues.map((i) => ({ ...i, path: ['input', ...i.path] })) } : {}),
  };
}

/** What {@link runPaidExecution} produced: the docs/spec-notes.md 2.7 answer, or the problem of a failure after payment (refunded by the caller). */
export type PaidExecutionResult = { ok: true; body: ExecutionSucceeded } | { ok: false; status: number; body: Problem };

/**
 * Runs the resolved capability once through the shared Executor with the settled payment and
 * records it (docs/decisions.md "x402 payments"); `early` is a read-only capability's run started while the
 * payment settled (`Executor.startEarly`), recorded instead of running again. A failure is 502 (or the capability's 503/504) with
 * extension members `execution_id`, `execution_status: "FAILED"`, `error` and `payment` (RFC 9457
 * reserves `status` for the HTTP status); the paywall refunds it and adds `refund`.
 */
export async function runPaidExecution(
  services: Services,
  operationId: string,
  capability: Pick<ResolvedCapability, 'definition' | 'input'> & { route?: readonly string[]; fixedCharge?: boolean },
  payment: SettledPayment,
  early?: EarlyRun,
  /** The call's one Executor (the one that started `early`); a new one by default. */
  executor: Executor = new Executor(services),
): Promise<PaidExecutionResult> {
  const charge: ExecutionCharge = { tx_hash: payment.txHash, amount: payment.amount, payer: payment.payer };
  // x402 `upto` (a cost known only afterwards: a routed call or a quote): the call settles what it
  // used (the answering offer's price) before its record names the settlement; nothing above it is
  // taken, so no refund (docs/decisions.md "Payment schemes"). A fixed-price deferred payment (a
  // batch-settlement voucher on one of the gateway's own capabilities) has no transaction to name:
  // the paywall's `complete` commits it after the run (docs/decisions.md "batch-settlement").
  //
  // A voucher on a provider's offer (a route or a quote) is committed the same way, before the
  // provider's share is recorded, and always for its whole amount (the price was fixed before the
  // voucher was signed: batch-settlement is offered only where it is), and the share goes to the
  // voucher's channel credits, credited only once the worker claimed and settled the channel
  // (docs/decisions.md "batch-settlement": provider offers).
  if (payment.deferred && (capability.route !== undefined || capability.fixedCharge)) {
    charge.settle = async (price) => {
      // `fixedCharge` (a quoted call) and a voucher: the whole authorized amount
      const whole = capability.fixedCharge || payment.voucher !== undefined || price === undefined;
      const settled = await services.paywall.settleUsed(payment, whole ? BigInt(payment.amount) : price);
      return { tx_hash: settled.txHash, amount: settled.amount };
    };
  }
  if (payment.voucher) charge.earnings = channelEarnings(services, payment.voucher);
  const { record, failure } = await executor.run(operationId, capability, charge, early);
  if (failure) {
    const status = failure.status >= 500 ? failure.status : 502;
    return {
      ok: false,
      status,
      body: problemDetails(status, failure.message, {
        execution_id: record.execution_id,
        execution_status: 'FAILED',
        error: record.error,
        payment: record.payment,
      }),
    };
  }
  const refund = await refundAboveAnswer(services, record, payment);
  return {
    ok: true,
    body: {
      execution_id: record.execution_id,
      status: 'SUCCEEDED',
      result: record.result!,
      payment: record.payment,
      ...(record.proof ? { proof: record.proof } : {}),
      ...(record.provider ? { provider: record.provider } : {}),
      ...(record.attempts ? { attempts: record.attempts } : {}),
      ...(refund ? { refund } : {}),
    },
  };
}

/**
 * Where the provider's share of a call paid by a `batch-settlement` voucher goes: not the provider
 * ledger (the voucher is not money yet) but the voucher's channel credits (`recordChannelCredit` of
 * @acg/channels), at the channel's charged total after this call (`voucher.cumulative`, base units);
 * the worker credits the ledger once the chain's claimed total covers it and a settlement paid it to
 * the treasury (`releaseClaimedCredits`; packages/channels README "Provider shares"). A voucher never
 * claimed (the channel refunded or withdrawn first) credits nobody.
 */
function channelEarnings(services: Services, voucher: NonNullable<SettledPayment['voucher']>): ShareEarnings {
  return {
    credit: ({ payment_tx_hash: _offChain, price, ...credit }) =>
      retryWhileRedisUnavailable(() =>
        recordChannelCredit(services.redis, services.keys, {
          channelId: voucher.channelId,
          cumulative: BigInt(voucher.cumulative),
          credit: { ...credit, price: price.toString() },
        }),
      ),
  };
}

/**
 * Queues the refund a routed success owes (docs/marketplace.md "Money": the 402 asked for the
 * highest price of the route): the part of `payment` above the answering offer's price, which the
 * Executor wrote into the SUCCEEDED record as its `refund` intent, as a durable on-chain refund to
 * the payer (the refund queue of @acg/payments, once per execution id: the recovery sweep queues
 * the same intent if this process dies first). Undefined when nothing is owed.
 */
async function refundAboveAnswer(services: Services, record: ExecutionRecord, payment: SettledPayment) {
  if (!record.refund) return undefined;
  const amount = record.refund.amount;
  await retryWhileRedisUnavailable(() =>
    services.refunds.enqueue({ operationId: record.execution_id, payer: payment.payer, amount, paymentTxHash: payment.txHash }),
  );
  return { status: 'pending' as const, amount };
}

/** A {@link runPaidExecution} result as the paywall's outcome (a failure is refunded). */
export function paidOutcome(r: PaidExecutionResult): Outcome {
  return r.ok ? { ok: true, status: 200, body: r.body } : { ok: false, status: r.status, body: r.body, refund: true };
}

/** {@link runPaidExecution} as the paywall's outcome (a failure is refunded). */
export async function paidExecutionOutcome(
  services: Services,
  capability: Pick<ResolvedCapability, 'definition' | 'input'> & { route?: readonly string[] },
  payment: SettledPayment,
  early?: EarlyRun,
): Promise<Outcome> {
  return paidOutcome(await runPaidExecution(services, payment.operationId, capability, payment, early));
}

/** The paywall's route name of an execution: REST `POST /api/v1/execute` and MCP tools share it, so one payment buys one execution on either. */
export const EXECUTE_ROUTE = 'execute';

/** The challenge's description of an execution. */
export const executeDescription = (capabilityId: string) => `Execute ${capabilityId}`;
