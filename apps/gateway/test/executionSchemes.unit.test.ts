import type { ResolvedCapability } from '@acg/execution';
import { describe, expect, it } from 'vitest';
import { executionSchemes, type RoutedCapability } from '../src/paidRoute/routing.js';

// Where each x402 scheme is offered on a paid execution (docs/decisions.md "Payment schemes", "batch-settlement").
const own = { price: 1000n } as unknown as ResolvedCapability;

describe('executionSchemes', () => {
  it('offers batch-settlement after exact where the price is fixed before the voucher is signed', () => {
    expect(executionSchemes(own as RoutedCapability)).toEqual(['exact', 'batch-settlement']);
    expect(executionSchemes({ ...own, route: ['p1', 'p2'] } as RoutedCapability)).toEqual(['exact', 'batch-settlement']);
    expect(executionSchemes({ ...own, route: ['p1', 'p2'], priceVaries: true } as RoutedCapability, true)).toEqual(['exact', 'upto', 'batch-settlement']);
  });

  it('offers upto, not batch-settlement, on a route whose offers ask different prices', () => {
    expect(executionSchemes({ ...own, route: ['p1', 'p2'], priceVaries: true } as RoutedCapability)).toEqual(['exact', 'upto']);
  });
});
