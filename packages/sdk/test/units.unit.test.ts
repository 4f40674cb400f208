import { describe, expect, it } from 'vitest';
import { InvalidAmountError, formatUsdc, parseBaseUnits, parseUsdc } from '../src/index.js';

describe('parseUsdc (decimal USDC → integer base units, 6 decimals)', () => {
  it.each([
    ['0.001', 1_000n],
    ['0.01', 10_000n],
    ['0.05', 50_000n],
    ['1', 1_000_000n],
    ['2.5', 2_500_000n],
    ['0.000001', 1n],
    ['0', 0n],
    ['0.100000', 100_000n],
    ['10000', 10_000_000_000n],
  ])('string %s → %s', (input, expected) => {
    expect(parseUsdc(input)).toBe(expected);
  });

  it.each([
    [0.01, 10_000n],
    [0.05, 50_000n],
    [1, 1_000_000n],
    [0.000001, 1n],
    [1e21, 1_000_000_000_000_000_000_000_000_000n],
  ])('number %s → %s', (input, expected) => {
    expect(parseUsdc(input)).toBe(expected);
  });

  it.each([['-1'], ['1e-3'], ['0.0000001'], ['abc'], [''], [' 1'], ['1.'], ['.5'], ['+1'], ['01'], ['1,5']])('rejects string %j', (input) => {
    expect(() => parseUsdc(input)).toThrow(InvalidAmountError);
  });

  it.each([[-0.5], [Number.NaN], [Number.POSITIVE_INFINITY], [1e-7], [0.1 + 0.2]])('rejects number %s', (input) => {
    expect(() => parseUsdc(input)).toThrow(InvalidAmountError);
  });

  it('names the offending setting in the message', () => {
    expect(() => parseUsdc('x', 'spendLimits.totalUsdc')).toThrow(/spendLimits\.totalUsdc/);
  });
});

describe('parseBaseUnits (integer string → bigint)', () => {
  it('parses integer strings, safe integers and bigints', () => {
    expect(parseBaseUnits('1000')).toBe(1000n);
    expect(parseBaseUnits(1000)).toBe(1000n);
    expect(parseBaseUnits(7n)).toBe(7n);
    expect(parseBaseUnits('0')).toBe(0n);
  });
  it.each([['1.5'], ['-1'], ['0x10'], [''], [1.5]])('rejects %j', (input) => {
    expect(() => parseBaseUnits(input as never)).toThrow(InvalidAmountError);
  });
  it('rejects a negative bigint', () => {
    expect(() => parseBaseUnits(-1n)).toThrow(InvalidAmountError);
  });
});

describe('formatUsdc (base units → decimal USDC)', () => {
  it.each([
    [0n, '0'],
    [1n, '0.000001'],
    [1_000n, '0.001'],
    [100_000n, '0.1'],
    [2_500_000n, '2.5'],
    [10_000_000_000n, '10000'],
  ])('%s → %s', (input, expected) => {
    expect(formatUsdc(input)).toBe(expected);
  });

  it('round-trips with parseUsdc', () => {
    for (const v of ['0.001', '1.234567', '42', '0.5']) expect(formatUsdc(parseUsdc(v))).toBe(v);
  });

  it('rejects negative amounts', () => {
    expect(() => formatUsdc(-1n)).toThrow(InvalidAmountError);
  });
});
