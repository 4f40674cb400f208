import { describe, expect, it } from 'vitest';
import { rankOffers, routePrice, type RoutableOffer } from '../src/routing.js';

const offer = (provider_id: string, price: bigint, p50: number | null, extra: Partial<RoutableOffer> = {}): RoutableOffer => ({
  provider_id,
  provider: provider_id,
  price,
  timeout_ms: 1000,
  latency_ms_p50: p50,
  latency_ms_p99: p50,
  success_rate: null,
  status: 'live',
  routable: true,
  ...extra,
});

const cheapSlow = offer('prv_A', 1000n, 400);
const midFast = offer('prv_B', 2000n, 20);
const dearMid = offer('prv_C', 3000n, 100);
const all = [dearMid, cheapSlow, midFast];
const scores = new Map<string, number | null>([
  ['prv_A', 40],
  ['prv_B', 60],
  ['prv_C', 90],
]);
const ids = (r: ReturnType<typeof rankOffers>) => (r.ok ? r.offers.map((o) => o.provider_id) : r.reason);

describe('rankOffers (docs/marketplace.md "Routing")', () => {
  it('orders by price, by measured p50, or by trust score', () => {
    expect(ids(rankOffers(all, { prefer: 'cheapest', max_price: null }, scores))).toEqual(['prv_A', 'prv_B', 'prv_C']);
    expect(ids(rankOffers(all, { prefer: 'fastest', max_price: null }, scores))).toEqual(['prv_B', 'prv_C', 'prv_A']);
    expect(ids(rankOffers(all, { prefer: 'trusted', max_price: null }, scores))).toEqual(['prv_C', 'prv_B', 'prv_A']);
    // trusted is the default
    expect(ids(rankOffers(all, { max_price: null }, scores))).toEqual(['prv_C', 'prv_B', 'prv_A']);
  });

  it('puts unmeasured offers last when fastest, unscored last when trusted', () => {
    const fresh = offer('prv_D', 500n, null);
    expect(ids(rankOffers([fresh, ...all], { prefer: 'fastest', max_price: null }, scores)).at(-1)).toBe('prv_D');
    expect(ids(rankOffers([fresh, ...all], { prefer: 'trusted', max_price: null }, scores)).at(-1)).toBe('prv_D');
  });

  it('applies the allow list, the exclusions and the maximum price, and says why nothing is left', () => {
    expect(ids(rankOffers(all, { prefer: 'cheapest', max_price: 2000n }, scores))).toEqual(['prv_A', 'prv_B']);
    expect(ids(rankOffers(all, { prefer: 'cheapest', max_price: null, providers: ['prv_C', 'prv_B'] }, scores))).toEqual(['prv_B', 'prv_C']);
    expect(ids(rankOffers(all, { prefer: 'cheapest', max_price: null, exclude: ['prv_A'] }, scores))).toEqual(['prv_B', 'prv_C']);
    expect(ids(rankOffers(all, { prefer: 'cheapest', max_price: 999n }, scores))).toBe('over_max_price');
    expect(ids(rankOffers(all, { max_price: null, exclude: ['prv_A', 'prv_B', 'prv_C'] }, scores))).toBe('excluded');
    expect(
      ids(
        rankOffers(
          all.map((o) => ({ ...o, routable: false })),
          { max_price: null },
          scores,
        ),
      ),
    ).toBe('no_live_offer');
  });

  it('never routes an offer that is not routable', () => {
    const down = { ...cheapSlow, status: 'down' as const, routable: false };
    expect(ids(rankOffers([down, midFast, dearMid], { prefer: 'cheapest', max_price: null }, scores))).toEqual(['prv_B', 'prv_C']);
  });

  it('asks the route for its highest price', () => {
    expect(routePrice(all)).toBe(3000n);
    expect(routePrice([cheapSlow])).toBe(1000n);
  });
});
