import {
  PaymentChainUnavailableError,
  PaymentConflictError,
  PaymentInProgressError,
  PaymentVerificationUnavailableError,
  requestHash,
  type Outcome,
  type PaidResponse,
  type PaywallStep,
  type SettledPayment,
} from '@acg/payments';
import type { TRPCError } from '@trpc/server';
import { header, type Context } from './context.js';
import { problem, problemOf, rawError } from './problem.js';

/** What a paid procedure declares: its route name, price and description for the challenge. */
export interface PaidSpec<I> {
  /** Stable route name scoping Idempotency-Key and request hashes, e.g. `execute`. */
  route: string;
  /** REST path of the resource, for PaymentRequired.resource.url. */
  path: string;
  /** Price of this call, integer USDC base units (6 decimals). */
  price(input: I, ctx: Context): bigint;
  description(input: I): string;
  /** Creates the id of the operation this payment buys (e.g. `exe_...`). */
  newOperationId(): string;
}

/** Context a paid procedure's resolver receives. */
export interface PaidContext {
  /** The settled payment; null when `replay` holds the stored answer. */
  payment: SettledPayment | null;
  operationId: string;
  /** The stored response of an earlier identical paid request (idempotent replay). */
  replay?: unknown;
}

/** What the next middleware or resolver gives back (tRPC's middleware result). */
type NextResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };

/** 409/503 problems of the paywall's typed errors; anything else is rethrown as is. */
function paymentProblem(e: unknown): unknown {
  if (e instanceof PaymentConflictError) return problem(409, e.message);
  if (e instanceof PaymentInProgressError) return problem(409, e.message, {}, { 'Retry-After': '1' });
  if (e instanceof PaymentChainUnavailableError) {
    return problem(503, e.message, { reason: e.reason, payment: { status: e.payment } }, { 'Retry-After': String(e.retryAfterSeconds) });
  }
  if (e instanceof PaymentVerificationUnavailableError) return problem(503, e.message, {}, { 'Retry-After': '5' });
  return e;
}

/**
 * The x402 paywall as a tRPC middleware (STYLE "procedures built from procedures"): every paid
 * route does `.use(paid({...}))` after its input validation, so bad input is refused before any
 * payment. Data flows one way: `paywall.begin` (challenge, replay, or a settled payment) → the
 * resolver runs once with the settled payment → `paywall.complete` stores its answer (and refunds
 * a failure) → respond. A replayed payment or Idempotency-Key gets the stored answer
 * (DESIGN "x402 payments").
 * Errors: 402 challenge (with `PAYMENT-REQUIRED`), 409 conflict or in-progress, 503 facilitator
 * or Redis down (with `Retry-After`; a payment already settled is then refunded), 503
 * `payment_chain_unavailable` (Retry-After; `payment.status` `not_charged` or `unknown`).
 */
export function paid<I>(spec: PaidSpec<I>) {
  return async <R extends NextResult>(opts: { ctx: Context; input: I; next: (o: { ctx: PaidContext }) => Promise<R> }): Promise<R> => {
    const { ctx, input } = opts;
    const { paywall } = ctx.services;
    const operationId = spec.newOperationId();
    let step: PaywallStep;
    try {
      step = await paywall.begin({
        resourceUrl: `${ctx.services.publicBaseUrl()}${spec.path}`,
        description: spec.description(input),
        price: spec.price(input, ctx),
        route: spec.route,
        requestHash: requestHash('POST', spec.route, input),
        idempotencyKey: header(ctx, 'idempotency-key')?.slice(0, 200),
        operationId,
        getHeader: (name) => header(ctx, name),
      });
    } catch (e) {
      throw paymentProblem(e);
    }
    if (step.kind === 'challenge' || step.kind === 'refused') throw rawError(402, { ...step.response.body }, step.response.headers);

    let fresh: R | undefined;
    let resp: Extract<PaidResponse, { kind: 'response' }>;
    if (step.kind === 'replay') {
      resp = step.response;
    } else {
      const { payment } = step;
      let outcome: Outcome;
      try {
        // the operation id reserved with the payment (a reconciled replay runs under the first request's id)
        const next = await opts.next({ ctx: { payment, operationId: payment.operationId } satisfies PaidContext });
        fresh = next;
        // the resolver's status (e.g. 202) and headers (e.g. Location) are stored with the body, so replays match
        if (next.ok) outcome = { ok: true, status: ctx.response.status ?? 200, headers: { ...ctx.responseHeaders }, body: next.data };
        else {
          const { status, body, headers } = problemOf(next.error);
          outcome = { ok: false, status, body, headers, refund: true };
        }
      } catch (e) {
        fresh = undefined;
        outcome = paywall.failedOutcome(e, payment.operationId);
      }
      try {
        resp = await paywall.complete(step, outcome);
      } catch (e) {
        throw paymentProblem(e);
      }
    }
    if (resp.status >= 400) throw rawError(resp.status, resp.body as Record<string, unknown>, resp.headers);
    Object.assign(ctx.responseHeaders, resp.headers);
    ctx.response.status = resp.status;
    if (fresh && !resp.replayed) return fresh;
    return opts.next({ ctx: { payment: null, operationId, replay: resp.body } satisfies PaidContext });
  };
}
