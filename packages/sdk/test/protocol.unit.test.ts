import { encodePaymentRequiredHeader } from '@x402/core/http';
import { describe, expect, it } from 'vitest';
import {
  GatewayError,
  PaymentTermsMismatchError,
  UnknownCapabilityError,
  advertisedPrice,
  parseProblem,
  readPaymentRequired,
  selectRequirement,
} from '../src/index.js';
import { TREASURY, USDC, paymentRequired, problem, requirement, walletBalancesEntry } from './fixtures.js';

describe('parseProblem', () => {
  it('keeps an RFC 9457 body with its validation errors and extension members', () => {
    const body = problem(400, 'The input does not match the input_schema of "intelligence.wallet_balances".', {
      errors: [{ path: ['input', 'address'], message: 'must be 0x followed by 40 hex characters', code: 'invalid_format' }],
      code: 'BAD_REQUEST',
    });
    const p = parseProblem(400, JSON.stringify(body));
    expect(p).toEqual(body);
    const err = new GatewayError(p);
    expect(err.name).toBe('GatewayError');
    expect(err.status).toBe(400);
    expect(err.title).toBe('Bad Request');
    expect(err.errors).toEqual(body.errors);
    expect(err.shortMessage).toBe(body.detail);
    expect(err.message).toContain('- input.address: must be 0x followed by 40 hex characters');
  });

  it('reads execution_id and refund of a failure after payment', () => {
    const body = problem(503, 'Could not read balances on base.', {
      execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
      refund: { status: 'pending', amount: '1000' },
    });
    const p = parseProblem(503, JSON.stringify(body));
    const err = new GatewayError(p);
    expect(err.executionId).toBe('exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T');
    expect(err.refund).toEqual({ status: 'pending', amount: '1000' });
  });

  it('turns a non-JSON body into a problem with the HTTP status', () => {
    const p = parseProblem(502, '<html>\n  <body>Bad gateway</body></html>');
    expect(p).toEqual({ type: 'about:blank', title: 'Bad Gateway', status: 502, detail: '<html> <body>Bad gateway</body></html>' });
    expect(parseProblem(418, '')).toEqual({ type: 'about:blank', title: 'HTTP 418', status: 418, detail: '' });
  });

  it('uses the HTTP status even when the body claims another', () => {
    expect(parseProblem(404, JSON.stringify({ status: 200, detail: 'x' })).status).toBe(404);
  });

  it('falls back to message when detail is missing and drops malformed issues', () => {
    const p = parseProblem(400, JSON.stringify({ message: 'bad', errors: [{ path: ['a', 1, {}], message: 'm' }, 'junk'] }));
    expect(p.detail).toBe('bad');
    expect(p.title).toBe('Bad Request');
    expect(p.errors).toEqual([{ path: ['a', 1], message: 'm' }]);
  });

  it('UnknownCapabilityError is a 404 GatewayError listing the available ids', () => {
    const err = new UnknownCapabilityError('x.y', { available: ['a.b', 'c.d'] });
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(404);
    expect(err.capabilityId).toBe('x.y');
    expect(err.message).toContain('Available: a.b, c.d');
  });
});

describe('readPaymentRequired', () => {
  it('decodes the base64 PAYMENT-REQUIRED header', () => {
    const pr = paymentRequired();
    expect(readPaymentRequired(encodePaymentRequiredHeader(pr), undefined)).toEqual(pr);
  });

  it('falls back to the JSON body (docs/spec-notes.md 2.9 fields plus accepts) and keeps only v2 fields', () => {
    const pr = paymentRequired();
    const body = { ...pr, scheme: 'exact', network: 'eip155:8453', payTo: TREASURY, maxAmountRequired: '1000', asset: USDC };
    expect(readPaymentRequired(null, body)).toEqual(pr);
    expect(readPaymentRequired('not base64 json!', body)).toEqual(pr);
  });

  it('returns undefined for anything else', () => {
    expect(readPaymentRequired(null, undefined)).toBeUndefined();
    expect(readPaymentRequired(null, { x402Version: 1, accepts: [] })).toBeUndefined();
    expect(readPaymentRequired(Buffer.from('{"x402Version":2}').toString('base64'), { detail: 'x' })).toBeUndefined();
  });
});

describe('selectRequirement (challenge vs /registry terms)', () => {
  const cap = walletBalancesEntry();

  it('accepts the gateway challenge matching the registry, addresses in any case', () => {
    const r = requirement({ payTo: TREASURY.toLowerCase() as `0x${string}`, asset: USDC.toUpperCase().replace('0X', '0x') as `0x${string}` });
    const picked = selectRequirement(cap, paymentRequired([r]));
    expect(picked.requirement).toBe(r);
    expect(picked.amount).toBe(1000n);
  });

  it('accepts a lower amount than advertised', () => {
    expect(selectRequirement(cap, paymentRequired([requirement({ amount: '999' })])).amount).toBe(999n);
  });

  it('skips non-matching requirements and picks the first matching one', () => {
    const good = requirement();
    const picked = selectRequirement(cap, paymentRequired([requirement({ network: 'eip155:1' }), good]));
    expect(picked.requirement).toBe(good);
  });

  it.each([
    ['payTo', { payTo: '0x000000000000000000000000000000000000dEaD' }, /payTo/],
    ['asset', { asset: '0x0000000000000000000000000000000000000001' }, /asset/],
    ['network', { network: 'eip155:84532' }, /network "eip155:84532" is not eip155:8453/],
    ['scheme', { scheme: 'upto' }, /scheme "upto"/],
    ['amount above the advertised price', { amount: '1001' }, /above the advertised price 1000/],
    ['non-integer amount', { amount: '0.001' }, /not an integer string/],
  ])('refuses a challenge with another %s', (_what, over, why) => {
    let err: unknown;
    try {
      selectRequirement(cap, paymentRequired([requirement(over as never)]));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PaymentTermsMismatchError);
    expect((err as PaymentTermsMismatchError).problems[0]).toMatch(why);
  });

  it('refuses when the registry advertises no x402 terms or the version is not 2', () => {
    expect(() => selectRequirement(walletBalancesEntry({ x402: null }), paymentRequired())).toThrow(PaymentTermsMismatchError);
    expect(() => selectRequirement(cap, { ...paymentRequired(), x402Version: 1 })).toThrow(/x402Version 1/);
    expect(() => selectRequirement(cap, paymentRequired([]))).toThrow(/no accepts/);
  });

  it('refuses a registry network other than the expected payment network', () => {
    const other = walletBalancesEntry({ x402: { ...cap.x402!, network: 'eip155:1' } });
    expect(() => selectRequirement(other, paymentRequired())).toThrow(/differs from the registry/);
  });

  it('advertisedPrice prefers x402.maxAmountRequired, then price_base_units', () => {
    expect(advertisedPrice(cap)).toBe(1000n);
    expect(advertisedPrice(walletBalancesEntry({ x402: { ...cap.x402!, maxAmountRequired: undefined }, price_base_units: '5' }))).toBe(5n);
    expect(advertisedPrice(walletBalancesEntry({ x402: { ...cap.x402!, maxAmountRequired: undefined }, price_base_units: null }))).toBeUndefined();
  });
});
