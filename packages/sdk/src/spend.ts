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
  /**
   * The payment went through (or may have): count it as spent. `settled` (base units, at most
   * `amount`) counts only what was settled and returns the rest: an `upto` settlement below its
   * ceiling, a voucher charged less than its increment. Default (or above `amount`): all of it.
   * Idempotent: only the first commit or release counts.
   */
  commit(settled?: bigint): void;
  /** Nothing was charged: return the reservation. Idempotent. */
  release(): void;
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/**
 * Book-keeping of what a client pays, in integer USDC base units (6 decimals).
 *
 * `reserve(amount)` is synchronous, so concurrent `execute` calls can never together pass the
 * total limit: the check counts spent + in-flight + escrowed + amount. Limits are parsed once at
 * construction (throws InvalidAmountError). Across schemes (README "Spend limits"): an `exact`
 * payment counts its amount; an `upto` authorization its ceiling until the settlement says what was
 * settled (`commit(settled)`); a batch-settlement deposit counts when made (`reserveDeposit`, held
 * as the channel's escrow), and each voucher its increment (`reserveVoucher`: checked against the
 * per-call limit, taken from the escrow, and counted as spent for what the server charged).
 */
export class SpendLedger {
  readonly perCallLimit: bigint | undefined;
  readonly totalLimit: bigint | undefined;
  private spentUnits = 0n;
  private pendingUnits = 0n;
  /** Deposited into batch-settlement channels and not yet charged by a voucher, by channel id (lowercase). */
  private readonly escrow = new Map<string, bigint>();
  private escrowUnits = 0n;

  constructor(limits: SpendLimits = {}) {
    this.perCallLimit = limits.perCallUsdc === undefined ? undefined : parseUsdc(limits.perCallUsdc, 'spendLimits.perCallUsdc');
    this.totalLimit = limits.totalUsdc === undefined ? undefined : parseUsdc(limits.totalUsdc, 'spendLimits.totalUsdc');
  }

  /**
   * Throws {@link SpendLimitExceededError} when paying `amount` (base units) would break a limit,
   * without reserving anything.
   */
  check(amount: bigint, capabilityId?: string): void {
    this.checkPerCall(amount, capabilityId);
    this.checkTotal(amount, capabilityId);
  }

  /** Throws {@link SpendLimitExceededError} (`perCall`) when one payment of `amount` (base units) is over the per-call limit. */
  checkPerCall(amount: bigint, capabilityId?: string): void {
    if (this.perCallLimit !== undefined && amount > this.perCallLimit) {
      throw new SpendLimitExceededError({ ...this.base(amount, capabilityId), limit: 'perCall', limitBaseUnits: this.perCallLimit });
    }
  }

  /** Throws {@link SpendLimitExceededError} (`total`) when spent + in flight + escrowed + `amount` (base units) is over the total limit. */
  checkTotal(amount: bigint, capabilityId?: string): void {
    if (this.totalLimit !== undefined && this.spentUnits + this.pendingUnits + this.escrowUnits + amount > this.totalLimit) {
      throw new SpendLimitExceededError({ ...this.base(amount, capabilityId), limit: 'total', limitBaseUnits: this.totalLimit });
    }
  }

  private base(amount: bigint, capabilityId: string | undefined) {
    // escrowed channel deposits count towards the total like payments in flight
    return { amount, spentBaseUnits: this.spentUnits, pendingBaseUnits: this.pendingUnits + this.escrowUnits, capabilityId };
  }

  /** Checks the limits, then reserves `amount` (base units) until commit or release. */
  reserve(amount: bigint, capabilityId?: string): SpendReservation {
    if (amount < 0n) throw new RangeError('amount must not be negative');
    this.check(amount, capabilityId);
    return this.hold(amount, (settled) => {
      this.spentUnits += settled;
    });
  }

  /**
   * A batch-settlement channel deposit of `amount` (base units) into `channelId`: checked against the
   * total limit only (it is not a payment to anyone yet; the per-call limit applies to vouchers), held
   * in flight until `commit()`, which moves it into the channel's escrow, or `release()`.
   */
  reserveDeposit(channelId: string, amount: bigint, capabilityId?: string): SpendReservation {
    if (amount < 0n) throw new RangeError('amount must not be negative');
    this.checkTotal(amount, capabilityId);
    return this.hold(amount, (settled) => this.addEscrow(channelId, settled));
  }

  /**
   * A voucher raising the cumulative claim on `channelId` by `increment` (base units): checked against
   * the per-call limit; the part the channel's escrow covers is taken from it (already counted in the
   * total), the rest is checked against the total limit. `commit(charged)` counts what the server
   * charged as spent and gives the uncharged part back to the escrow; `release()` gives it all back.
   */
  reserveVoucher(channelId: string, increment: bigint, capabilityId?: string): SpendReservation {
    if (increment < 0n) throw new RangeError('increment must not be negative');
    this.checkPerCall(increment, capabilityId);
    const key = channelId.toLowerCase();
    const covered = minBig(this.escrow.get(key) ?? 0n, increment);
    this.checkTotal(increment - covered, capabilityId);
    this.addEscrow(key, -covered);
    return this.hold(
      increment,
      (settled) => {
        this.spentUnits += settled;
        this.addEscrow(key, minBig(covered, increment - settled));
      },
      () => this.addEscrow(key, covered),
    );
  }

  /** A cooperative refund of `amount` (base units) from `channelId` came back to the wallet: the escrow shrinks by at most what it holds. */
  refunded(channelId: string, amount: bigint): void {
    const key = channelId.toLowerCase();
    this.addEscrow(key, -minBig(this.escrow.get(key) ?? 0n, amount));
  }

  /** Base units the total limit still allows (total - spent - in flight - escrowed), or undefined without a total limit. */
  remainingTotal(): bigint | undefined {
    if (this.totalLimit === undefined) return undefined;
    const left = this.totalLimit - this.spentUnits - this.pendingUnits - this.escrowUnits;
    return left > 0n ? left : 0n;
  }

  /** Base units this client deposited into `channelId` and no voucher has charged yet. */
  escrowOf(channelId: string): bigint {
    return this.escrow.get(channelId.toLowerCase()) ?? 0n;
  }

  private addEscrow(channelId: string, delta: bigint): void {
    if (delta === 0n) return;
    const key = channelId.toLowerCase();
    const next = (this.escrow.get(key) ?? 0n) + delta;
    if (next === 0n) this.escrow.delete(key);
    else this.escrow.set(key, next);
    this.escrowUnits += delta;
  }

  private hold(amount: bigint, onCommit: (settled: bigint) => void, onRelease?: () => void): SpendReservation {
    this.pendingUnits += amount;
    let open = true;
    return {
      amount,
      commit: (settled?: bigint) => {
        if (!open) return;
        open = false;
        this.pendingUnits -= amount;
        onCommit(settled === undefined || settled < 0n || settled > amount ? amount : settled);
      },
      release: () => {
        if (!open) return;
        open = false;
        this.pendingUnits -= amount;
        onRelease?.();
      },
    };
  }

  /** Totals so far: spent (base units and decimal USDC), in flight, and held in channel escrow. */
  totals(): SpendTotals {
    return {
      baseUnits: this.spentUnits,
      usdc: formatUsdc(this.spentUnits),
      pendingBaseUnits: this.pendingUnits,
      ...(this.escrowUnits > 0n ? { escrowBaseUnits: this.escrowUnits } : {}),
    };
  }
}
