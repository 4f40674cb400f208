/** USDC has 6 decimals: 1 USDC = 1,000,000 base units. */
export const USDC_DECIMALS = 6;

/**
 * Normalize a price in USDC base units given as bigint or integer string; null stays null.
 * Throws `TypeError` on a negative, fractional or non-numeric value.
 */
export function toBaseUnits(value: bigint | string | null): bigint | null {
  if (value === null) return null;
  if (typeof value === 'string') {
    if (!/^(0|[1-9]\d*)$/.test(value)) throw new TypeError(`price_base_units must be an integer string, got ${JSON.stringify(value)}`);
    return BigInt(value);
  }
  if (value < 0n) throw new TypeError(`price_base_units must not be negative, got ${value}`);
  return value;
}

/**
 * Format USDC base units as a decimal string in USDC without trailing zeros:
 * `1000n` → `"0.001"`, `100000n` → `"0.1"`, `0n` → `"0"`, `2500000n` → `"2.5"`.
 */
export function formatUsdc(baseUnits: bigint): string {
  if (baseUnits < 0n) throw new TypeError('USDC amount must not be negative');
  const scale = 10n ** BigInt(USDC_DECIMALS);
  const whole = baseUnits / scale;
  const fraction = (baseUnits % scale).toString().padStart(USDC_DECIMALS, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

/**
 * Parse a decimal USDC string (at most 6 decimals) into base units: `"0.001"` → `1000n`,
 * `"2.5"` → `2500000n`. Throws `TypeError` on anything else.
 */
export function parseUsdc(decimal: string): bigint {
  const m = /^(0|[1-9]\d*)(?:\.(\d{1,6}))?$/.exec(decimal);
  if (!m) throw new TypeError(`not a USDC amount with at most ${USDC_DECIMALS} decimals: ${JSON.stringify(decimal)}`);
  return BigInt(m[1]) * 10n ** BigInt(USDC_DECIMALS) + BigInt((m[2] ?? '').padEnd(USDC_DECIMALS, '0'));
}
