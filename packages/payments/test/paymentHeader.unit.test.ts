import type { PaymentRequirements } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { describePaymentFailure, eip3009Authorization, type PaymentError, readPaymentPayload, requestHash } from '../src/index.js';

const accepts: PaymentRequirements[] = [
  {
    scheme: 'exact',
    network: 'eip155:8453',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    amount: '1000',
    payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
  },
];
const authorization = {
  from: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  to: accepts[0].payTo,
  value: '1000',
  validAfter: '0',
  validBefore: '9999999999',
  nonce: `0x${'ab'.repeat(32)}`,
};
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const headers = (h: Record<string, string>) => (name: string) => h[name.toLowerCase()];

describe('readPaymentPayload', () => {
  it('returns undefined without a payment header', () => {
    expect(readPaymentPayload(headers({}), accepts)).toBeUndefined();
  });

  it('reads a v2 PaymentPayload from PAYMENT-SIGNATURE', () => {
    const p = { x402Version: 2, accepted: accepts[0], payload: { signature: '0x01', authorization } };
    expect(readPaymentPayload(headers({ 'payment-signature': b64(p) }), accepts)).toEqual(p);
  });

  it('lifts a legacy v1 payload in X-PAYMENT to v2 against the accepted requirements', () => {
    const v1 = { x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x01', authorization } };
    const p = readPaymentPayload(headers({ 'x-payment': b64(v1) }), accepts)!;
    expect(p.x402Version).toBe(2);
    expect(p.accepted).toEqual(accepts[0]);
    expect(p.payload).toEqual(v1.payload);
  });

  it('refuses malformed headers with a stable reason', () => {
    const reasons = (h: string) => {
      try {
        readPaymentPayload(headers({ 'payment-signature': h }), accepts);
        return 'accepted';
      } catch (e) {
        return (e as PaymentError).reason;
      }
    };
    expect(reasons('%%%')).toBe('invalid_payment_header');
    expect(reasons(b64('just a string'))).toBe('invalid_payment_header');
    expect(reasons(b64({ x402Version: 3 }))).toBe('invalid_x402_version');
    expect(reasons(b64({ x402Version: 2, payload: {} }))).toBe('invalid_payment_header');
    expect(reasons(b64({ x402Version: 1, scheme: 'exact', network: 'polygon', payload: {} }))).toBe('unsupported_scheme');
    expect(reasons(b64({ x402Version: 1, scheme: 'exact', network: 'nowhere', payload: {} }))).toBe('unsupported_network');
  });
});

describe('eip3009Authorization', () => {
  it('extracts a well-formed authorization and lowercases the nonce', () => {
    const a = eip3009Authorization({
      x402Version: 2,
      accepted: accepts[0],
      payload: { authorization: { ...authorization, nonce: authorization.nonce.toUpperCase().replace('0X', '0x') } },
    });
    expect(a?.nonce).toBe(authorization.nonce);
  });
  it('returns undefined for a malformed or missing authorization', () => {
    expect(eip3009Authorization({ x402Version: 2, accepted: accepts[0], payload: {} })).toBeUndefined();
    expect(eip3009Authorization({ x402Version: 2, accepted: accepts[0], payload: { authorization: { ...authorization, value: '-1' } } })).toBeUndefined();
    expect(eip3009Authorization({ x402Version: 2, accepted: accepts[0], payload: { authorization: { ...authorization, nonce: '0x12' } } })).toBeUndefined();
  });
});

describe('describePaymentFailure', () => {
  it('maps known reasons to fixed sentences and never echoes free text', () => {
    expect(describePaymentFailure('invalid_exact_evm_payload_authorization_valid_before')).toMatch(/expired/);
    expect(describePaymentFailure('weird reason with 0xdeadbeef calldata and http://rpc')).not.toMatch(/\s0x|http:/);
  });
});

describe('requestHash', () => {
  it('is stable under key order and differs with the body', () => {
    expect(requestHash('post', '/x', { a: 1, b: { c: 2, d: 3 } })).toBe(requestHash('POST', '/x', { b: { d: 3, c: 2 }, a: 1 }));
    expect(requestHash('POST', '/x', { a: 1 })).not.toBe(requestHash('POST', '/x', { a: 2 }));
  });
});
