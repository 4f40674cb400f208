/** Whole-USDC JSON number (≤ 6 decimals) → integer base units. Throws RangeError on more decimals. */
export function usdcToBaseUnits(amount: number): bigint {
  const scaled = Math.round(amount * 1e6);
  if (!Number.isFinite(amount) || Math.abs(scaled - amount * 1e6) > 1e-6) throw new RangeError('at most 6 decimals');
  return BigInt(scaled);
}

/** Integer base units → whole-USDC JSON number (exact for amounts below 2^53 base units). */
export function baseUnitsToUsdc(units: bigint | string): number {
  return Number(BigInt(units)) / 1e6;
}
