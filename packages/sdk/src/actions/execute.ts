import { registryTerms } from '../chooseRequirement.js';
import { parseUnits } from 'viem';
import type { Capability } from '../types.js';
import type { GatewayContext } from '../context.js';
import {
  GatewayRequestError,
  type GatewayError,
  type PaymentRequiredError,
  type PaymentTermsMismatchError,
  type SpendLimitExceededError,
  type UnknownCapabilityError,
} from '../errors.js';
import { idempotencyHeader, jsonOf } from '../http.js';
import { payAndRetry } from '../payAndRetry.js';
import type { Execution } from '../types.js';
import { throwForStatus } from './internal.js';

/** Parameters of {@link execute}. */
export interface ExecuteParameters {
  /** Capability id as listed in `/registry`, e.g. `intelligence.wallet_balances`. */
  capabilityId: string;
  /** The capability's input, shaped by its `input_schema`. */
  input: Record<string, unknown>;
  /**
   * `Idempotency-Key` (max 200 characters). Reusing a key with the same `capability_id` and
   * `input` returns the stored execution without paying again; with another body it is a 409
   * {@link GatewayError}. Default: a random UUID (unless the context has `idempotency: false`).
   */
  idempotencyKey?: string;
  /**
   * A live quote for this capability and this exact input (`quote` action, `POST /api/v1/quotes`):
   * the call pays exactly its price on its provider, and the payment ceiling is the quote's price.
   */
  quoteId?: string;
  /** The quoted price, integer USDC base units (`price_base_units` of the quote): the most this call will sign for. */
  quotedPrice?: bigint;
  /**
   * Which offers of a capability offered by several providers may answer, and in which order
   * (docs/marketplace.md "Routing"): `max_price_usdc` (decimal USDC), `prefer` (`cheapest`,
   * `fastest`, `trusted`: the default), `providers` (allow list of `prv_` ids), `exclude`. The
   * 402 then asks for the highest price of the route, and the rest is refunded on-chain after the
   * answer (`refund` on the execution, which names `provider` and `attempts`). No offer fits: a
   * 422 {@link GatewayError} with `reason: "no_route"`, before any payment.
   */
  routing?: {
    max_price_usdc?: string;
    prefer?: 'cheapest' | 'fastest' | 'trusted';
    providers?: string[];
    exclude?: string[];
  };
  /** Aborts the HTTP requests. An abort after a signed payment was sent counts it as spent. */
  signal?: AbortSignal;
}

/** What {@link execute} returns: `{execution_id, status: "SUCCEEDED", result, payment: {tx_hash, amount}}`, `amount` in integer USDC base units. */
export type ExecuteReturnType<TResult = Record<string, unknown>> = Execution<TResult>;

/** Errors of {@link execute}. */
export type ExecuteErrorType =
  | UnknownCapabilityError
  | PaymentRequiredError
  | SpendLimitExceededError
  | PaymentTermsMismatchError
  | GatewayError
  | GatewayRequestError;

/**
 * Runs a capability: `POST /api/v1/execute {capability_id, input}` (docs/spec-notes.md 2.7), paying the x402
 * challenge with {@link payAndRetry} against the terms `/registry` advertises for the capability
 * (a scheme of `schemes`, network, USDC asset, payTo, amount not above the advertised price; the registry
 * is read again once on a mismatch).
 *
 * @returns the execution; `payment.amount` is an integer string of USDC base units (6 decimals).
 * @throws {UnknownCapabilityError} not in /registry (checked before any request), or a 404.
 * @throws {PaymentRequiredError} a 402 without an account, or the payment was refused (`reason`).
 * @throws {SpendLimitExceededError} {PaymentTermsMismatchError} before anything is signed.
 * @throws {GatewayError} 400 bad input (`errors`), 409 (also a quote for another input, or used), 410 quote expired, 422, 502/503 failed after payment (`executionId`, `refund`), 503 offer suspended.
 * @throws {GatewayRequestError} unreachable; `paymentOutcome: "unknown"` when a signed payment got no answer.
 *
 * @example
 * const exe = await execute(ctx, { capabilityId: 'intelligence.wallet_balances', input: { address } })
 * console.log(exe.result, exe.payment.tx_hash)
 */
export async function execute<TResult = Record<string, unknown>>(ctx: GatewayContext, params: ExecuteParameters): Promise<ExecuteReturnType<TResult>> {
  const { capabilityId, input, idempotencyKey, signal, quoteId, quotedPrice, routing } = params;
  // a quoted call pays the quote's price: the ceiling is that price rather than the route's highest price
  const termsOf = (c: Parameters<typeof registryTerms>[0]) => {
    const terms = routedTerms(c, routing);
    return quotedPrice === undefined ? terms : { ...terms, maxAmount: quotedPrice };
  };
  const path = '/api/v1/execute';
  const capability = await ctx.registry.capability(capabilityId);
  const r = await payAndRetry(ctx, {
    path,
    method: 'POST',
    headers: idempotencyHeader(ctx, idempotencyKey),
    body: JSON.stringify({ capability_id: capabilityId, input, ...(quoteId ? { quote_id: quoteId } : {}), ...(routing ? { routing } : {}) }),
    signal,
    label: capabilityId,
    terms: () => termsOf(capability),
    refreshTerms: async () => termsOf(await ctx.registry.capability(capabilityId, { refresh: true })),
  });
  if (!r.response.ok) throwForStatus(r, capabilityId);
  const body = jsonOf<Execution<TResult>>(ctx, path, r);
  if (!body || typeof body.execution_id !== 'string' || body.status !== 'SUCCEEDED') {
    throw new GatewayRequestError(`${ctx.baseUrl}${path}`, 'The gateway answered execute with an unexpected body.', { status: r.response.status });
  }
  return body;
}

/**
 * The payment terms of a call: the registry's, and for a capability with several offers
 * (docs/marketplace.md) at most the highest offer's price, capped by `routing.max_price_usdc`:
 * the 402 of a route asks for its highest price, and the rest is refunded after the answer.
 */
function routedTerms(capability: Capability, routing: ExecuteParameters['routing']) {
  const terms = registryTerms(capability);
  const offers = capability.offers;
  if (!offers || offers.length === 0) return terms;
  let max = 0n;
  for (const o of offers) if (parseUnits(o.price, 6) > max) max = parseUnits(o.price, 6);
  if (routing?.max_price_usdc !== undefined && parseUnits(routing.max_price_usdc, 6) < max) max = parseUnits(routing.max_price_usdc, 6);
  return { ...terms, maxAmount: max };
}
