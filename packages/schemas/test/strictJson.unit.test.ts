import { describe, expect, it } from 'vitest';
import { assertFiniteNumbers, JsonNumberError, numberRoundTrips, parseStrictJson, unsafeJsonNumber } from '../src/strictJson.js';

describe('parseStrictJson', () => {
  it('parses ordinary JSON as JSON.parse does', () => {
    const text = '{"a":[1,-2.5,0,-0,0.0,1e3,1E-3,9007199254740991,-9007199254740991,1.7976931348623157e308],"b":"1e400","c":null}';
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
  });

  it.each(['1e400', '-1e400', '1e-400', '-1e-400', '9007199254740993', '-9007199254740993', '1' + '0'.repeat(400)])('refuses %s with its path', (n) => {
    let err: unknown;
    try {
      parseStrictJson(`{"input":{"n":[0,${n}]}}`);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JsonNumberError);
    expect((err as JsonNumberError).literal).toBe(n.length > 40 ? `${n.slice(0, 37)}...` : n);
    if (!Number.isFinite(Number(n))) expect((err as JsonNumberError).path).toEqual(['input', 'n', 1]);
  });

  it('skips number-like text inside strings, escaped quotes included', () => {
    expect(parseStrictJson('["1e400","a\\"1e400",{"k\\\\":"-1e400"}]')).toEqual(['1e400', 'a"1e400', { 'k\\': '-1e400' }]);
    expect(unsafeJsonNumber('"\\"" 1e400')).toBe('1e400');
  });

  it('throws SyntaxError for invalid JSON', () => {
    expect(() => parseStrictJson('{')).toThrow(SyntaxError);
  });

  it('numberRoundTrips: zero literals stay zero, fractions keep the nearest double', () => {
    for (const ok of ['0', '-0', '0.0', '0e10', '0.1', '1.5e-300', '123456789.123456789']) expect(numberRoundTrips(ok), ok).toBe(true);
    for (const bad of ['1e309', '0.0001e-400', '18446744073709551616']) expect(numberRoundTrips(bad), bad).toBe(false);
  });

  it('assertFiniteNumbers walks a parsed value', () => {
    expect(() => assertFiniteNumbers({ a: [1, { b: 2 }] })).not.toThrow();
    expect(() => assertFiniteNumbers({ a: [1, { b: Number.NEGATIVE_INFINITY }] })).toThrow(JsonNumberError);
    expect(() => assertFiniteNumbers([Number.NaN])).toThrow(JsonNumberError);
  });
});
