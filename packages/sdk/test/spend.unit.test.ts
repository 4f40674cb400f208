import { describe, expect, it } from 'vitest';
import { InvalidAmountError, SpendLedger, SpendLimitExceededError } from '../src/index.js';

describe('SpendLedger', () => {
  it('parses the limits into base units', () => {
    const l = new SpendLedger({ perCallUsdc: '0.01', totalUsdc: 0.05 });
    expect(l.perCallLimit).toBe(10_000n);
    expect(l.totalLimit).toBe(50_000n);
    expect(new SpendLedger().perCallLimit).toBeUndefined();
  });

  it('refuses malformed limits', () => {
    expect(() => new SpendLedger({ perCallUsdc: '-1' })).toThrow(InvalidAmountError);
    expect(() => new SpendLedger({ totalUsdc: 'lots' })).toThrow(InvalidAmountError);
  });

  it('allows a payment equal to the per-call limit and refuses one above it', () => {
    const l = new SpendLedger({ perCallUsdc: '0.001' });
    l.reserve(1_000n).commit();
    const err = (() => {
      try {
        l.reserve(1_001n, 'x.y');
      } catch (e) {
        return e;
      }
    })() as SpendLimitExceededError;
    expect(err).toBeInstanceOf(SpendLimitExceededError);
    expect(err.limit).toBe('perCall');
    expect(err.amount).toBe(1_001n);
    expect(err.limitBaseUnits).toBe(1_000n);
    expect(err.capabilityId).toBe('x.y');
    expect(err.shortMessage).toContain('0.001001 USDC');
    expect(l.totals()).toEqual({ baseUnits: 1_000n, usdc: '0.001', pendingBaseUnits: 0n });
  });

  it('counts spent plus in-flight reservations against the total limit', () => {
    const l = new SpendLedger({ totalUsdc: '0.003' });
    const a = l.reserve(1_000n);
    const b = l.reserve(1_000n);
    expect(l.totals().pendingBaseUnits).toBe(2_000n);
    l.reserve(1_000n).commit(); // exactly at the limit with the two in flight
    let err: unknown;
    try {
      l.reserve(1n);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SpendLimitExceededError);
    expect((err as SpendLimitExceededError).limit).toBe('total');
    expect((err as SpendLimitExceededError).spentBaseUnits).toBe(1_000n);
    expect((err as SpendLimitExceededError).pendingBaseUnits).toBe(2_000n);
    a.commit();
    b.release();
    expect(l.totals()).toEqual({ baseUnits: 2_000n, usdc: '0.002', pendingBaseUnits: 0n });
    l.reserve(1_000n).commit(); // the released one made room again
    expect(l.totals().baseUnits).toBe(3_000n);
  });

  it('commit and release are idempotent and exclusive', () => {
    const l = new SpendLedger();
    const r = l.reserve(500n);
    r.commit();
    r.commit();
    r.release();
    expect(l.totals()).toEqual({ baseUnits: 500n, usdc: '0.0005', pendingBaseUnits: 0n });
    const s = l.reserve(700n);
    s.release();
    s.commit();
    expect(l.totals()).toEqual({ baseUnits: 500n, usdc: '0.0005', pendingBaseUnits: 0n });
  });

  it('a zero total limit refuses any non-zero payment', () => {
    const l = new SpendLedger({ totalUsdc: 0 });
    expect(() => l.reserve(1n)).toThrow(SpendLimitExceededError);
    expect(() => l.check(0n)).not.toThrow();
  });

  it('upto: the ceiling is held until the settlement; commit(settled) counts what was settled, never more than the ceiling', () => {
    const l = new SpendLedger({ totalUsdc: '0.02' });
    const r = l.reserve(10_000n);
    expect(l.totals().pendingBaseUnits).toBe(10_000n);
    expect(() => l.reserve(10_001n)).toThrow(SpendLimitExceededError);
    r.commit(4_200n);
    expect(l.totals()).toEqual({ baseUnits: 4_200n, usdc: '0.0042', pendingBaseUnits: 0n });
    l.reserve(10_000n).commit(99_999n); // a settlement above the ceiling counts the ceiling
    expect(l.totals().baseUnits).toBe(14_200n);
  });

  it('channels: a deposit counts towards the total when made, vouchers take their increment from it, a refund gives it back', () => {
    const l = new SpendLedger({ perCallUsdc: '0.001', totalUsdc: '0.01' });
    expect(() => l.reserveDeposit('0xAB', 10_001n)).toThrow(SpendLimitExceededError);
    const d = l.reserveDeposit('0xAB', 6_000n); // deposits are not held to the per-call limit
    d.commit();
    expect(l.totals()).toEqual({ baseUnits: 0n, usdc: '0', pendingBaseUnits: 0n, escrowBaseUnits: 6_000n });
    expect(l.remainingTotal()).toBe(4_000n);
    expect(() => l.reserveVoucher('0xab', 1_001n)).toThrow(/per-call/);
    l.reserveVoucher('0xab', 1_000n).commit(400n); // charged 400 of 1000: 600 back to the escrow
    expect(l.totals()).toEqual({ baseUnits: 400n, usdc: '0.0004', pendingBaseUnits: 0n, escrowBaseUnits: 5_600n });
    l.reserveVoucher('0xab', 1_000n).release();
    expect(l.escrowOf('0xAB')).toBe(5_600n);
    // a voucher on a channel this ledger never funded counts against the total in full
    l.reserveDeposit('0xef', 4_000n).commit();
    expect(() => l.reserveVoucher('0xcd', 1n)).toThrow(SpendLimitExceededError);
    l.refunded('0xab', 10_000n); // at most what the escrow holds
    expect(l.totals()).toEqual({ baseUnits: 400n, usdc: '0.0004', pendingBaseUnits: 0n, escrowBaseUnits: 4_000n });
  });
});
