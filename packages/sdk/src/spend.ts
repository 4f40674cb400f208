import { SpendLimitExceededError } from './errors.js';
import type { SpendTotals } from './types.js';
import { formatUsdc, parseUsdc } from './units.js';

/** Spend limits in USDC (decimal string or number, at most 6 decimals), e.g. `{ perCallUsdc: '0.01', totalUsdc: '0.05' }`. */
export interface SpendLimits {
  /** Largest single payment, USDC (e.g. `"0.01"`). Unset: no per-call limit. */
  perCallUsdc?: string | number;
  /** Largest sum of all payments made by this client, USDC. Unset: no total limit. */
  totalUsdc?: string | number;
}

/** A reservation taken before signing; settle it with `commit()` (paid) or `release()` (not paid). */
export interface SpendReservation {
  /** integer, USDC base units */
  readonly amount: bigint;
  /** The payment went through (or may have): count it as spent. Idempotent. */
  commit(): void;
  /** Nothing was charged: return the reservation. Idempotent. */
  release(): void;
}

/**
 * Book-keeping of what a client pays, in integer USDC base units (6 decimals).
 *
 * `reserve(amount)` is synchronous, so concurrent `execute` calls can never together pass the
 * total limit: the check counts spent + in-flight + amount. Limits are parsed once at
 * construction (throws InvalidAmountError).
 */
export class SpendLedger {
  readonly perCallLimit: bigint | undefined;
  readonly totalLimit: bigint | undefined;
  private spentUnits = 0n;
  private pendingUnits = 0n;

  constructor(limits: SpendLimits = {}) {
    this.perCallLimit = limits.perCallUsdc === undefined ? undefined : parseUsdc(limits.perCallUsdc, 'spendLimits.perCallUsdc');
    this.totalLimit = limits.totalUsdc === undefined ? undefined : parseUsdc(limits.totalUsdc, 'spendLimits.totalUsdc');
  }

  /**
   * Throws {@link SpendLimitExceededError} when paying `amount` (base units) would break a limit,
   * without reserving anything.
   */
  check(amount: bigint, capabilityId?: string): void {
    const base = { amount, spentBaseUnits: this.spentUnits, pendingBaseUnits: this.pendingUnits, capabilityId };
    if (this.perCallLimit !== undefined && amount > this.perCallLimit) {
      throw new SpendLimitExceededError({ ...base, limit: 'perCall', limitBaseUnits: this.perCallLimit });
    }
    if (this.totalLimit !== undefined && this.spentUnits + this.pendingUnits + amount > this.totalLimit) {
      throw new SpendLimitExceededError({ ...base, limit: 'total', limitBaseUnits: this.totalLimit });
    }
  }

  /** Checks the limits, then reserves `amount` (base units) until commit or release. */
  reserve(amount: bigint, capabilityId?: string): SpendReservation {
    if (amount < 0n) throw new RangeError('amount must not be negative');
    this.check(amount, capabilityId);
    this.pendingUnits += amount;
    let open = true;
    return {
      amount,
      commit: () => {
        if (!open) return;
        open = false;
        this.pendingUnits -= amount;
        this.spentUnits += amount;
      },
      release: () => {
        if (!open) return;
        open = false;
        this.pendingUnits -= amount;
      },
    };
  }

  /** Totals so far: spent (base units and decimal USDC) and in flight. */
  totals(): SpendTotals {
    return { baseUnits: this.spentUnits, usdc: formatUsdc(this.spentUnits), pendingBaseUnits: this.pendingUnits };
  }
}
