import { OfferName, ProviderName } from '@acg/schemas';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duration, every, usdc } from '../src/web/pages/signedInPages.js';
import { htmlPattern } from '../src/web/pages/providerOnboard.js';

describe('htmlPattern', () => {
  // browsers compile the pattern attribute as new RegExp(`^(?:${p})$`, 'v'); one that does not compile is ignored
  const asBrowser = (p: string) => new RegExp(`^(?:${htmlPattern(p)})$`, 'v');

  it('escapes a literal "-" at either end of a character class, so the pattern compiles with the v flag', () => {
    const raw = '^[A-Za-z0-9][A-Za-z0-9 ._-]*$';
    expect(() => new RegExp(`^(?:${raw})$`, 'v')).toThrow();
    expect(htmlPattern(raw)).toBe('^[A-Za-z0-9][A-Za-z0-9 ._\\-]*$');
    expect(htmlPattern('^[-a]$')).toBe('^[\\-a]$');
    expect(htmlPattern('^[a-z][a-z0-9_]*$')).toBe('^[a-z][a-z0-9_]*$');
  });

  it('accepts exactly what the zod schemas accept (provider and offer names)', () => {
    const cases: [RegExp, { safeParse(v: string): { success: boolean } }][] = [
      [asBrowser('^[A-Za-z0-9][A-Za-z0-9 ._-]*$'), ProviderName],
      [asBrowser('^[a-z][a-z0-9_]*$'), OfferName],
    ];
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'aZ09 ._-/é\\[]'.split('')), minLength: 1, maxLength: 20 }), (s) => {
        for (const [re, schema] of cases) expect(re.test(s), s).toBe(schema.safeParse(s).success);
      }),
    );
  });
});

describe('formatting', () => {
  it('writes USDC base units as decimal USDC', () => {
    expect(usdc('450000')).toBe('0.45 USDC');
    expect(usdc(0n)).toBe('0 USDC');
    expect(usdc('1000')).toBe('0.001 USDC');
    expect(usdc('12000000')).toBe('12 USDC');
  });
  it('writes periods for people', () => {
    expect(duration(86_400)).toBe('1 day');
    expect(duration(604_800)).toBe('7 days');
    expect(duration(3600)).toBe('1 hour');
    expect(duration(90)).toBe('90 seconds');
    expect(every(3600)).toBe('every hour');
    expect(every(7200)).toBe('every 2 hours');
  });
});
