import type { EarlyRun } from '@acg/execution';
import {
  PAYMENT_HEADERS,
  requestHash,
  type Outcome,
  type PaidAnswer,
  type PaidRequest,
  type PaidResponse,
  type Paywall,
  type SettledPayment,
} from '@acg/payments';
import type { ProblemError } from '@acg/schemas';
import { inSpan } from '@acg/tracing';

/**
 * What a paid call ended with, whatever the transport (each edge maps it once: REST and /trpc in
 * `../trpc/paid.ts`, MCP tools in `../mcp/paidTool.ts` and `../mcp/jobTool.ts`):
 * - `payment_required`: the 402 challenge (no payment, or a refused one: `body.reason`);
 * - `response`: the operation's stored answer (fresh, or `replayed` for a payment seen before), with its settlement;
 * - `problem`: the payment could not be taken now (409 conflict or in progress, 503 chain or
 *   facilitator unavailable, with `Retry-After`): the paywall's ProblemError as it made it.
 */
export type PaidCallResult = Extract<PaidResponse, { kind: 'payment_required' }> | PaidAnswer | { kind: 'problem'; error: ProblemError };

/** Where the gateway is reached (`Services.publicBaseUrl`): the origin of every paid resource's URL. */
export interface PublicOrigin {
  publicBaseUrl(): string;
}

/** What an edge knows of a paid call, for {@link paidRequest}. */
export interface PaidCallSpec {
  /** Path of the paid resource at the gateway's public origin (`PaymentRequired.resource.url`), e.g. `/api/v1/execute` or `/mcp`. */
  path: string;
  /** Paywall route name scoping Idempotency-Key and request hashes (`execute`, `jobs`, ...). */
  route: string;
  /** The request as hashed (`requestHash('POST', route, hashed)`): one payment buys one call of exactly this. */
  hashed: unknown;
  description: string;
  /** USDC base units. */
  price: bigint;
  extensions: Record<string, unknown>;
  /**
   * The x402 schemes offered (`ChallengedResource.schemes`; default `exact` alone; `exact` is always
   * first, whether named or not), e.g. `upto` on a routed call, `batch-settlement` on a fixed-price
   * execution; those the paywall does not accept are left out.
   */
  schemes?: readonly string[];
  /** `maxTimeoutSeconds` of the offered deferred scheme (`upto`) when the operation is settled long after it starts: a job (`ChallengedResource.deferredMaxTimeoutSeconds`). */
  deferredMaxTimeoutSeconds?: number;
  operationId: string;
  /** The payment: HTTP headers by lower-case name (REST, /trpc), or MCP's decoded `_meta["x402/payment"]` (null: none). */
  payment: { headers: (name: string) => string | undefined } | { payload: unknown };
  idempotencyKey?: string;
  /** The wallet the request's credentials prove (a replay's proof of being the payer). */
  caller?: string;
  paymentRequiredMessage?: string;
}

/** The public URL of a paid resource at `path` (`PaymentRequired.resource.url`). */
export function resourceUrl(services: PublicOrigin, path: string): string {
  return `${services.publicBaseUrl()}${path}`;
}

/** The paywall's view of a paid call, built the same way for REST, /trpc and MCP (docs/architecture.md "The paid path"). */
export function paidRequest(services: PublicOrigin, spec: PaidCallSpec): PaidRequest {
  const { payment } = spec;
  return {
    resourceUrl: resourceUrl(services, spec.path),
    description: spec.description,
    price: spec.price,
    extensions: spec.extensions,
    ...(spec.schemes?.length ? { schemes: spec.schemes } : {}),
    ...(spec.deferredMaxTimeoutSeconds ? { deferredMaxTimeoutSeconds: spec.deferredMaxTimeoutSeconds } : {}),
    route: spec.route,
    requestHash: requestHash('POST', spec.route, spec.hashed),
    operationId: spec.operationId,
    ...('payload' in payment
      ? { paymentPayload: payment.payload ?? null }
      : { paymentHeaders: Object.fromEntries(PAYMENT_HEADERS.map((n) => [n, payment.headers(n)])) }),
    ...(spec.idempotencyKey ? { idempotencyKey: spec.idempotencyKey } : {}),
    ...(spec.caller ? { caller: spec.caller } : {}),
    ...(spec.paymentRequiredMessage ? { paymentRequiredMessage: spec.paymentRequiredMessage } : {}),
  };
}

/** Whether a paid request carries a payment at all (the caller's credentials are resolved only then). */
export function carriesPayment(request: Pick<PaidRequest, 'paymentHeaders' | 'paymentPayload'>): boolean {
  if (request.paymentPayload !== undefined) return request.paymentPayload !== null;
  return PAYMENT_HEADERS.some((n) => request.paymentHeaders?.[n] !== undefined);
}

/** How an edge runs its capability: at most once, with the settled payment and the early run started while it settled. */
export interface PaidOperation {
  /** Starts a read-only capability while the payment settles (the plan's `earlyStart`); undefined: it runs after settlement. */
  early?(payer: `0x${string}`, operationId: string): EarlyRun | undefined;
  run(payment: SettledPayment, early: EarlyRun | undefined): Promise<Outcome>;
}

/**
 * One paid call, in one direction (docs/architecture.md "The paid path"): the paywall decides
 * (challenge, refused, replay, or proceed with a settlement plan); on proceed the edge starts a
 * read-only capability early when the plan allows it, waits for the settlement, runs the
 * capability once and hands its outcome to the paywall's `complete` (store, refund, receipt).
 * Span `paywall` (scope @acg/payments) is the parent of `verify`, `settle`, `execute` and `store`.
 */
export function payForCall(paywall: Paywall, request: PaidRequest, op: PaidOperation): Promise<PaidCallResult> {
  return inSpan('@acg/payments', 'paywall', { 'acg.route': request.route, 'acg.operation_id': request.operationId }, async (span) => {
    const decision = await paywall.decide(request);
    if (decision.kind !== 'proceed') {
      span.setAttribute('acg.paywall.step', decision.kind);
      if (decision.kind === 'refused' && 'problem' in decision) return { kind: 'problem', error: decision.problem };
      return decision.response;
    }
    const { plan } = decision;
    // the operation id reserved with the payment (a reconciled replay runs under the first request's id, never early)
    const early = plan.earlyStart && plan.operationId === request.operationId ? startEarly(op, plan.payer, plan.operationId) : undefined;
    const settled = await plan.settlement;
    span.setAttribute('acg.paywall.step', settled.kind);
    if (settled.kind === 'refused') return 'problem' in settled ? { kind: 'problem', error: settled.problem } : settled.response;
    return paywall.complete(
      settled,
      Promise.resolve().then(() => op.run(settled.payment, early)),
    );
  });
}

/** {@link PaidOperation.early}, a throw ignored (the capability then runs after settlement). */
function startEarly(op: PaidOperation, payer: `0x${string}`, operationId: string): EarlyRun | undefined {
  try {
    return op.early?.(payer, operationId);
  } catch {
    return undefined;
  }
}
