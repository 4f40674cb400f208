import { describe, expect, it } from 'vitest';
import { Challenges, REQUIREMENTS_CACHE_MAX } from '../src/challenge.js';

const terms = {
  network: 'eip155:8453',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  assetName: 'USD Coin',
  assetVersion: '2',
} as const;

describe('Challenges: x402 requirements per price (issue 23 item 11)', () => {
  it('keeps at most REQUIREMENTS_CACHE_MAX prices however many distinct prices callers choose, the recent ones reused', () => {
    const c = new Challenges(terms);
    for (let p = 1n; p <= BigInt(REQUIREMENTS_CACHE_MAX * 20); p++) expect(c.requirements(p).amount).toBe(p.toString());
    expect(c.cachedPrices).toBe(REQUIREMENTS_CACHE_MAX);
    const last = BigInt(REQUIREMENTS_CACHE_MAX * 20);
    expect(c.requirements(last)).toBe(c.requirements(last));
    // an evicted price is built again, equal to what it was
    expect(c.requirements(1n)).toMatchObject({ scheme: 'exact', amount: '1', payTo: terms.payTo, asset: terms.asset });
    expect(c.cachedPrices).toBe(REQUIREMENTS_CACHE_MAX);
  });
});
