/**
 * Integer helpers shared by the protocol math. Every protocol rounds in its own documented
 * direction; these reproduce Solidity's truncating integer division on non-negative bigints.
 */

/** 1e18 (WAD). */
export const WAD = 10n ** 18n;

/** floor(x * y / d). */
export const mulDivDown = (x: bigint, y: bigint, d: bigint): bigint => (x * y) / d;

/** ceil(x * y / d). */
export const mulDivUp = (x: bigint, y: bigint, d: bigint): bigint => (x * y + (d - 1n)) / d;

/** A bigint as a float number, exact up to 2^53 and within float precision beyond. */
export function toNumber(x: bigint, decimals = 0): number {
  if (decimals === 0) return Number(x);
  const s = 10n ** BigInt(decimals);
  return Number(x / s) + Number(x % s) / Number(s);
}

/**
 * `numerator / denominator` as a float health factor, made consistent with the exact integer
 * comparison: when `numerator < denominator` (liquidatable) the float is kept strictly below 1
 * even if float rounding would give 1.0.
 */
export function ratio(numerator: bigint, denominator: bigint): number {
  if (denominator === 0n) return Number.POSITIVE_INFINITY;
  const scaled = (numerator * 10n ** 18n) / denominator;
  const r = toNumber(scaled, 18);
  if (numerator < denominator && r >= 1) return 1 - Number.EPSILON;
  return r;
}
