import type { ResolvedCapability } from '@acg/execution';
import { routePrice, usdcBaseUnits, type NoRouteReason } from '@acg/provider-directory';
import type { Routing } from '@acg/schemas';
import type { Services } from '../services.js';
import { problemDetails } from '../trpc/problem.js';
import type { ExecutionRefusal } from './execution.js';

/**
 * A resolved capability with the offers to try, in order (provider ids), when providers offer it;
 * `priceVaries` when they ask different prices: the cost is known only once one answers, so the
 * 402 also offers x402 `upto` with `price` (the highest) as its ceiling ({@link ROUTED_SCHEMES}).
 */
export type RoutedCapability = ResolvedCapability & { route?: readonly string[]; priceVaries?: boolean };

/** The schemes of a call whose cost is known only afterwards (docs/decisions.md "Payment schemes"): `exact` first, then `upto`. */
export const ROUTED_SCHEMES = ['exact', 'upto'] as const;

/**
 * The schemes of a call whose price is fixed before it is paid (the gateway's own capability, a route
 * whose offers all ask one price): `exact` first, then `batch-settlement` (docs/decisions.md
 * "batch-settlement": "Where it is offered").
 */
export const FIXED_PRICE_SCHEMES = ['exact', 'batch-settlement'] as const;

/** The schemes of a quoted call (its price is the quote's): `exact`, `upto`, `batch-settlement`. */
export const QUOTED_SCHEMES = ['exact', 'upto', 'batch-settlement'] as const;

/**
 * The x402 schemes a paid execution offers (the paywall leaves out those it does not accept, e.g.
 * `batch-settlement` unless PAYMENT_SCHEMES names it): a quoted call {@link QUOTED_SCHEMES}; a route
 * whose offers ask different prices {@link ROUTED_SCHEMES} (a voucher's amount is fixed when it is
 * signed, and the answering offer is known only afterwards, so no `batch-settlement` there); any other
 * call {@link FIXED_PRICE_SCHEMES}. A provider's share of a call paid by voucher is credited only from
 * claimed funds (`runPaidExecution`).
 */
export function executionSchemes(capability: RoutedCapability, quoted = false): readonly string[] {
  if (quoted) return QUOTED_SCHEMES;
  return capability.priceVaries ? ROUTED_SCHEMES : FIXED_PRICE_SCHEMES;
}

const NO_ROUTE: Record<NoRouteReason, string> = {
  no_live_offer: 'No offer of this capability is live now.',
  excluded: 'Every live offer of this capability is outside routing.providers or in routing.exclude.',
  over_max_price: 'Every live offer of this capability costs more than routing.max_price_usdc.',
};

/**
 * Applies a request's `routing` before any payment (docs/marketplace.md "Routing"): for a
 * capability offered by providers, the live offers are ranked (`ProviderDirectory.route`) and the
 * price becomes the highest price among them, the most this route may need (paid with `exact`, the
 * difference to the answering offer's price is refunded after the call; with `upto`, offered when
 * the prices differ, only the answering offer's price is settled). A built-in is a contract with one offer,
 * the gateway's own: `max_price_usdc` below its price or a `providers` allow list leaves no route.
 * No route is a 422 problem with `reason: "no_route"` and `cause` (`no_live_offer`, `excluded`,
 * `over_max_price`); nothing is paid.
 */
export async function routeExecution(
  services: Services,
  resolved: ResolvedCapability,
  routing: Routing | undefined,
): Promise<{ ok: true; capability: RoutedCapability } | ExecutionRefusal> {
  const maxPrice = routing?.max_price_usdc === undefined ? null : usdcBaseUnits(routing.max_price_usdc);
  const refuse = (cause: NoRouteReason): ExecutionRefusal => ({
    ok: false,
    status: 422,
    body: problemDetails(422, NO_ROUTE[cause], { reason: 'no_route', cause, capability_id: resolved.definition.id }),
  });
  const ranked = await services.providers.directory.route(resolved.definition.id, {
    prefer: routing?.prefer ?? 'trusted',
    providers: routing?.providers,
    exclude: routing?.exclude,
    max_price: maxPrice,
  });
  if (ranked === undefined) {
    if (routing?.providers) return refuse('excluded');
    if (maxPrice !== null && resolved.price > maxPrice) return refuse('over_max_price');
    return { ok: true, capability: resolved };
  }
  // an offer suspended by its trust score is not routed to (docs/trust-v1.md "Suspension"; the check is the directory's, shared by every path)
  if (!ranked.ok && ranked.reason === 'offer_suspended') {
    return {
      ok: false,
      status: 503,
      body: problemDetails(503, `Every offer of ${resolved.definition.id} that fits is suspended from routing: ${ranked.suspended.reason}.`, {
        reason: 'offer_suspended',
        capability_id: resolved.definition.id,
        provider_id: ranked.provider_id,
        suspended: ranked.suspended,
      }),
    };
  }
  if (!ranked.ok) return refuse(ranked.reason);
  const offers = ranked.offers;
  const price = routePrice(offers);
  const priceVaries = offers.some((o) => o.price !== price);
  return { ok: true, capability: { ...resolved, price, route: offers.map((o) => o.provider_id), ...(priceVaries ? { priceVaries } : {}) } };
}
