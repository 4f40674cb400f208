import { InvalidAmountError } from './errors.js';

/** USDC has 6 decimals: 1 USDC = 1,000,000 base units. */
export const USDC_DECIMALS = 6;

const SCALE = 10n ** BigInt(USDC_DECIMALS);
const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;
const INTEGER = /^(0|[1-9]\d*)$/;

/**
 * Parses a USDC amount written in USDC (not base units) into integer base units (6 decimals).
 *
 * Accepts a decimal string (`"0.01"`, `"1"`, `"2.5"`, `"0.000001"`) or a finite number
 * (`0.01`); at most 6 fractional digits, never negative, no exponent, no sign, no spaces.
 * Examples: `"0.001"` → `1000n`, `0.05` → `50000n`, `"10"` → `10000000n`.
 *
 * Throws {@link InvalidAmountError} for anything else (e.g. `"-1"`, `"1e-3"`, `"0.0000001"`,
 * `NaN`, `0.1 + 0.2` which is `0.30000000000000004`).
 */
export function parseUsdc(value: string | number, label = 'amount'): bigint {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new InvalidAmountError(label, value);
    // Shortest round-trip decimal; below 1e-6 JS prints an exponent (`1e-7`), i.e. too many decimals.
    text = String(value);
    if (text.includes('e-')) throw new InvalidAmountError(label, value, `more than ${USDC_DECIMALS} decimals`);
    if (text.includes('e+')) text = BigInt(value).toString();
  } else if (typeof value === 'string') {
    text = value;
  } else {
    throw new InvalidAmountError(label, value);
  }
  const m = DECIMAL.exec(text);
  if (!m) throw new InvalidAmountError(label, value);
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (fraction.length > USDC_DECIMALS) throw new InvalidAmountError(label, value, `more than ${USDC_DECIMALS} decimals`);
  return BigInt(m[1]!) * SCALE + BigInt(fraction.padEnd(USDC_DECIMALS, '0') || '0');
}

/**
 * Parses an integer string of USDC base units (`"1000"` → `1000n`), as found in x402
 * `amount` / `maxAmountRequired` and in `/registry` `price_base_units`.
 * Throws {@link InvalidAmountError} for a negative, fractional or non-numeric value.
 */
export function parseBaseUnits(value: string | bigint | number, label = 'amount'): bigint {
  if (typeof value === 'bigint') {
    if (value < 0n) throw new InvalidAmountError(label, value);
    return value;
  }
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || !INTEGER.test(text)) throw new InvalidAmountError(label, value);
  return BigInt(text);
}

/**
 * Formats integer USDC base units as a decimal string in USDC without trailing zeros:
 * `1000n` → `"0.001"`, `100000n` → `"0.1"`, `0n` → `"0"`, `2500000n` → `"2.5"`.
 * Throws {@link InvalidAmountError} for a negative amount.
 */
export function formatUsdc(baseUnits: bigint): string {
  if (baseUnits < 0n) throw new InvalidAmountError('amount', baseUnits);
  const whole = baseUnits / SCALE;
  const fraction = (baseUnits % SCALE).toString().padStart(USDC_DECIMALS, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}
