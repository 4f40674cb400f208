import type { EarlyRun } from '@acg/execution';
import type { SettledPayment } from '@acg/payments';
import type { TRPCError } from '@trpc/server';
import { carriesPayment, paidRequest, payForCall, resourceUrl } from '../paidRoute/paidCall.js';
import { accountOf, identify } from './authenticate.js';
import { header, type Context } from './context.js';
import { problemOf, rawError, trpcErrorOf } from './problem.js';
import { authenticationInfo, optionalSignInWithX } from './signInWithX.js';

/** What a paid procedure declares: its route name, price and description for the challenge. */
export interface PaidSpec<I> {
  /** Stable route name scoping Idempotency-Key and request hashes, e.g. `execute`. */
  route: string;
  /** REST path of the resource, for PaymentRequired.resource.url. */
  path: string;
  /** Price of this call, integer USDC base units (6 decimals). */
  price(input: I, ctx: Context): bigint;
  description(input: I): string;
  /**
   * x402 `PaymentRequired.extensions` of this route besides `payment-identifier` (which every 402
   * carries): `{bazaar}` from `../paidRoute/bazaar.ts`, so an x402 Bazaar indexer can list it.
   */
  extensions(input: I, ctx: Context): Record<string, unknown>;
  /**
   * The x402 schemes the 402 offers, `exact` always first (default: `exact` alone). `upto` where the
   * cost is known only afterwards: `price` is then its ceiling and the resolver settles what it used
   * (`Paywall.settleUsed`; docs/decisions.md "Payment schemes"). `batch-settlement` where the price is
   * fixed, when the paywall accepts it (PAYMENT_SCHEMES; docs/decisions.md "batch-settlement").
   */
  schemes?(input: I, ctx: Context): readonly string[] | undefined;
  /**
   * An operation that goes on after its answer and is settled when it ends (a job): paid with a
   * deferred scheme (`upto`), its answer is stored unsettled (`Outcome.settleLater`) and its owner
   * has it settled later; `deferredMaxTimeoutSeconds` is then the window its `upto` entry asks for
   * (docs/decisions.md "Payment schemes", jobs).
   */
  settlesLater?: { deferredMaxTimeoutSeconds(ctx: Context): number };
  /** Creates the id of the operation this payment buys (e.g. `exe_...`). */
  newOperationId(): string;
  /**
   * Starts a read-only operation once the payment is verified and reserved for this request, so
   * it overlaps the on-chain settlement (`Executor.startEarly`); the resolver gets it as
   * `ctx.early` and uses its result only after settlement. Undefined: the operation runs after
   * settlement.
   */
  early?(input: I, ctx: Context, call: { executionId: string; payer: string }): EarlyRun | undefined;
}

/** Context a paid procedure's resolver receives. */
export interface PaidContext {
  /** The settled payment; null when `replay` holds the stored answer. */
  payment: SettledPayment | null;
  operationId: string;
  /** The stored response of an earlier identical paid request (idempotent replay). */
  replay?: unknown;
  /** The operation started while the payment settled ({@link PaidSpec.early}), if any. */
  early?: EarlyRun;
}

/** What the next middleware or resolver gives back (tRPC's middleware result). */
type NextResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };

/** The public URL of a paid route's resource (`PaymentRequired.resource.url`, and the resource its sign-in-with-x challenges are issued for). */
export function resourceUrlOf(spec: Pick<PaidSpec<never>, 'path'>, ctx: Pick<Context, 'services'>): string {
  return resourceUrl(ctx.services, spec.path);
}

/**
 * The x402 paywall as a tRPC middleware (docs/code-style.md "Procedures built from procedures"): every paid
 * route does `.use(paid({...}))` after its input validation, so bad input is refused before any
 * payment. The transport-independent part is {@link payForCall} (shared with MCP tools): the
 * resolver runs once with the settled payment, its answer is stored (a failure refunded), and a
 * resent payment gets the stored answer only with proof of being the payer (its x402 payment
 * identifier, or the payer's bearer token: `PaidRequest.caller`), anyone else the receipt
 * (409 `payment_already_used`); an Idempotency-Key is the payer's and read after the payment
 * (packages/payments README "Replays, Idempotency-Key and one decision per paid call").
 * Errors: 402 challenge (with `PAYMENT-REQUIRED`), 409 conflict or in-progress, 503 facilitator
 * or Redis down (with `Retry-After`; a payment already settled is then refunded), 503
 * `payment_chain_unavailable` (Retry-After; `payment.status` `not_charged` or `unknown`).
 */
export function paid<I>(spec: PaidSpec<I>) {
  return async <R extends NextResult>(opts: { ctx: Context; input: I; next: (o: { ctx: PaidContext }) => Promise<R> }): Promise<R> => {
    const { ctx, input } = opts;
    const operationId = spec.newOperationId();
    const request = paidRequest(ctx.services, {
      path: spec.path,
      route: spec.route,
      hashed: input,
      description: spec.description(input),
      price: spec.price(input, ctx),
      extensions: spec.extensions(input, ctx),
      ...(spec.schemes ? { schemes: spec.schemes(input, ctx) } : {}),
      ...(spec.settlesLater ? { deferredMaxTimeoutSeconds: spec.settlesLater.deferredMaxTimeoutSeconds(ctx) } : {}),
      operationId,
      payment: { headers: (name) => header(ctx, name) },
      idempotencyKey: header(ctx, 'idempotency-key')?.slice(0, 200),
    });
    // the caller's credentials prove the payer of a settled payment sent again (read only with a payment);
    // the one identity step, lenient: a bad or expired credential is no caller and never blocks the payment
    if (carriesPayment(request)) request.caller = accountOf(await identify(ctx, { lenient: true, signInWithX: () => resourceUrlOf(spec, ctx) }));
    let fresh: R | undefined;
    const result = await payForCall(ctx.services.paywall, request, {
      early: spec.early && ((payer, executionId) => spec.early?.(input, ctx, { executionId, payer })),
      run: async (payment, early) => {
        const next = await opts.next({ ctx: { payment, operationId: payment.operationId, ...(early ? { early } : {}) } satisfies PaidContext });
        fresh = next;
        // the resolver's status (e.g. 202) and headers (e.g. Location) are stored with the body, so replays match
        if (next.ok) {
          const settleLater = spec.settlesLater !== undefined && payment.deferred === true;
          return {
            ok: true,
            status: ctx.response.status ?? 200,
            headers: { ...ctx.responseHeaders },
            body: next.data,
            ...(settleLater ? { settleLater } : {}),
          };
        }
        const { status, body, headers } = problemOf(next.error);
        return { ok: false, status, body, headers, refund: true };
      },
    });
    if (result.kind === 'problem') throw trpcErrorOf(result.error);
    if (result.kind === 'payment_required') throw rawError(402, { ...result.body }, result.headers);
    // a SIGN-IN-WITH-X sent with the payment gets its session token (Authentication-Info), never stored with the answer
    const signedIn = await optionalSignInWithX(ctx, resourceUrlOf(spec, ctx));
    const session: Record<string, string> = signedIn ? { 'Authentication-Info': authenticationInfo(signedIn.issued) } : {};
    if (result.status >= 400) throw rawError(result.status, result.body as Record<string, unknown>, { ...result.headers, ...session });
    Object.assign(ctx.responseHeaders, result.headers);
    ctx.response.status = result.status;
    if (fresh && !result.replayed) return fresh;
    return opts.next({ ctx: { payment: null, operationId, replay: result.body } satisfies PaidContext });
  };
}
