import type { OfferStatus, Routing, RoutingPreference } from '@acg/schemas';
import type { OfferSuspension } from './trustRecords.js';

/**
 * One provider's offer of a capability contract, as routing sees it (docs/marketplace.md
 * "Routing"): `price` in USDC base units (6 decimals), `timeout_ms` declared by the provider,
 * `latency_ms_p50` / `latency_ms_p99` measured (ms, null before a sample), `success_rate` 0..1
 * (null before a call), `status` (only `live` offers are routed).
 */
export interface RoutableOffer {
  provider_id: string;
  provider: string;
  price: bigint;
  timeout_ms: number;
  latency_ms_p50: number | null;
  latency_ms_p99: number | null;
  success_rate: number | null;
  status: OfferStatus;
  /**
   * Whether it may be routed to: an offer that joined a contract once a probe passed (`live`); the
   * offer that created its contract also before its first probe (`pilot`), as a new provider's
   * capability always was; after a failed probe (`down`) only while it is the contract's only offer.
   */
  routable: boolean;
}

/**
 * Where trust scores come from (docs/marketplace.md "Trust scores"): a score 0..100 per
 * (provider, capability), or null when the scorer has none. The gateway plugs one in
 * (`createServices({offerScorer})`); {@link successRateScorer} is the default.
 */
export interface OfferScorer {
  scoreOf(providerId: string, capabilityId: string): Promise<number | null>;
}

/** What a routing request may say, after its defaults: `prefer` is always set. */
export type RoutingOptions = Pick<Routing, 'providers' | 'exclude'> & { prefer?: RoutingPreference; max_price: bigint | null };

/** Why no offer can answer a request: all excluded or outside the allow list, all over `max_price`, or none live. */
export type NoRouteReason = 'no_live_offer' | 'excluded' | 'over_max_price';

/** {@link rankOffers}'s answer: the offers to try in order (never empty), or why there is none. */
export type RankedOffers =
  | { ok: true; offers: RoutableOffer[] }
  | { ok: false; reason: NoRouteReason }
  /** every offer that fits is suspended by its trust score (docs/trust-v1.md "Suspension"): the first one's provider and suspension */
  | { ok: false; reason: 'offer_suspended'; provider_id: string; suspended: OfferSuspension };

const NO_SCORE = -1;

/** Compares two nullable numbers, smaller first, null last. */
function ascending(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a - b;
}

/** Compares two nullable numbers, larger first, null last. */
function descending(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return b - a;
}

const byPrice = (a: RoutableOffer, b: RoutableOffer) => (a.price === b.price ? 0 : a.price < b.price ? -1 : 1);

/**
 * Orders the offers a request may use (docs/marketplace.md "Routing"); pure, so the same inputs
 * always give the same route. Keeps routable offers, inside `routing.providers` when given, outside
 * `routing.exclude`, at most `routing.max_price` (USDC base units) when not null; then sorts:
 * - `cheapest`: price ascending, then p50, then trust score;
 * - `fastest`: measured p50 ascending (unmeasured last), then price;
 * - `trusted` (default): trust score descending (`scores`, by provider id; unscored last), then
 *   success rate, then price.
 * Ties end on the provider id, so the order is total. Returns `{ok: false, reason}` when nothing is left.
 *
 * @example
 * rankOffers(offers, { prefer: 'cheapest', max_price: 5000n }, new Map()) // { ok: true, offers: [...] }
 */
export function rankOffers(offers: readonly RoutableOffer[], routing: RoutingOptions, scores: ReadonlyMap<string, number | null>): RankedOffers {
  const live = offers.filter((o) => o.routable);
  if (live.length === 0) return { ok: false, reason: 'no_live_offer' };
  const allowed = live.filter((o) => (!routing.providers || routing.providers.includes(o.provider_id)) && !(routing.exclude ?? []).includes(o.provider_id));
  if (allowed.length === 0) return { ok: false, reason: 'excluded' };
  const maxPrice = routing.max_price;
  const affordable = maxPrice === null ? allowed : allowed.filter((o) => o.price <= maxPrice);
  if (affordable.length === 0) return { ok: false, reason: 'over_max_price' };
  const score = (o: RoutableOffer) => scores.get(o.provider_id) ?? NO_SCORE;
  const byTrust = (a: RoutableOffer, b: RoutableOffer) => score(b) - score(a);
  const prefer = routing.prefer ?? 'trusted';
  const order: ((a: RoutableOffer, b: RoutableOffer) => number)[] =
    prefer === 'cheapest'
      ? [byPrice, (a, b) => ascending(a.latency_ms_p50, b.latency_ms_p50), byTrust]
      : prefer === 'fastest'
        ? [(a, b) => ascending(a.latency_ms_p50, b.latency_ms_p50), byPrice]
        : [byTrust, (a, b) => descending(a.success_rate, b.success_rate), byPrice];
  const sorted = [...affordable].sort((a, b) => {
    for (const compare of order) {
      const c = compare(a, b);
      if (c !== 0) return c;
    }
    return a.provider_id < b.provider_id ? -1 : a.provider_id > b.provider_id ? 1 : 0;
  });
  return { ok: true, offers: sorted };
}

/** The highest price among `offers` (USDC base units): what the 402 of a route asks for. */
export function routePrice(offers: readonly RoutableOffer[]): bigint {
  let max = 0n;
  for (const o of offers) if (o.price > max) max = o.price;
  return max;
}
