import { z } from 'zod';
import { ProviderId } from './ids.js';
import { DecimalString, LatencyPercentileMs, UsdcDecimalString } from './primitives.js';

// A provider's display name as served: provider.ts's ProviderName without its registration pattern (provider.ts imports
// execution.ts, which imports this file, so it is not imported from there)
const ProviderName = z.string().min(1).max(64);

/**
 * Marketplace routing (docs/marketplace.md): several providers offer one capability contract, and
 * `POST /api/v1/execute` may say which offers it accepts and in which order they are tried.
 */

/** How offers are ordered: `cheapest` (price), `fastest` (measured p50), `trusted` (trust score; the default). */
export const RoutingPreference = z.enum(['cheapest', 'fastest', 'trusted']);
export type RoutingPreference = z.infer<typeof RoutingPreference>;

/**
 * The optional `routing` of an execute request (docs/marketplace.md "Routing"):
 * - `max_price_usdc`: decimal USDC; offers above it are never tried (the 402 asks at most this);
 * - `prefer`: the order in which offers are tried (default `trusted`);
 * - `providers`: an allow list of provider ids; `exclude`: provider ids never tried.
 * A route left empty by these rules is a 422 `no_route` before any payment.
 */
export const Routing = z.strictObject({
  max_price_usdc: UsdcDecimalString.optional(),
  prefer: RoutingPreference.default('trusted'),
  providers: z.array(ProviderId).min(1).max(50).optional(),
  exclude: z.array(ProviderId).max(50).optional(),
});
export type Routing = z.infer<typeof Routing>;
export type RoutingInput = z.input<typeof Routing>;

/** What one tried offer gave: `succeeded`, `failed` (non-2xx, unreachable), `timeout`, `invalid_output`, `invalid_signature`. */
export const AttemptOutcome = z.enum(['succeeded', 'failed', 'timeout', 'invalid_output', 'invalid_signature']);
export type AttemptOutcome = z.infer<typeof AttemptOutcome>;

/** One offer tried for an execution, in order: the provider, what it gave, and how long it took (ms). */
export const RoutingAttempt = z.object({
  provider_id: ProviderId,
  outcome: AttemptOutcome,
  latency_ms: z.number().nonnegative(),
});
export type RoutingAttempt = z.infer<typeof RoutingAttempt>;

/** The provider whose offer answered an execution: its id and its display name. */
export const AnsweringProvider = z.object({ provider_id: ProviderId, name: ProviderName });
export type AnsweringProvider = z.infer<typeof AnsweringProvider>;

/** Where an offer stands for routing: `live` (probe passed: routed), `pilot` (not yet probed: not routed), `down` (its last probe failed: not routed). */
export const OfferStatus = z.enum(['live', 'pilot', 'down']);
export type OfferStatus = z.infer<typeof OfferStatus>;

/**
 * One offer of a capability as `/registry` and the catalog list it (docs/marketplace.md
 * "Contracts and offers"): `price` decimal USDC and `currency` `USDC`; `latency_ms_p50` and
 * `latency_ms_p99` measured over its recent calls and probes (ms, null before a sample);
 * `success_rate` 0..1 over its calls (null before one); `trust_score` 0..100 from the pluggable
 * scorer (null when it has none); `status` (see {@link OfferStatus}).
 */
export const CapabilityOffer = z.object({
  provider_id: ProviderId,
  provider: ProviderName,
  price: DecimalString,
  currency: z.literal('USDC'),
  latency_ms_p50: LatencyPercentileMs,
  latency_ms_p99: LatencyPercentileMs,
  success_rate: z.number().min(0).max(1).nullable(),
  trust_score: z.number().min(0).max(100).nullable(),
  status: OfferStatus,
});
export type CapabilityOffer = z.infer<typeof CapabilityOffer>;
