import * as x402 from '@x402/core/http';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader, decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '../src/headerCodec.js';

// non-ASCII text and characters JSON escapes: the header is base64 of the UTF-8 bytes
const paymentRequired = {
  x402Version: 2,
  error: 'Zahlung erforderlich: “0,001 USDC” — für /api/v1/execute ✓ \u2028 \\ "quoted"',
  resource: { url: 'http://127.0.0.1:1/api/v1/execute', description: 'Execute 𝔁 capability', mimeType: 'application/json' },
  accepts: [
    {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '1000',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    },
  ],
  extensions: { 'sign-in-with-x': { info: { nonce: 'a'.repeat(32) } } },
} as unknown as PaymentRequired;

const settle = {
  success: true,
  transaction: `0x${'ab'.repeat(32)}`,
  network: 'eip155:8453',
  payer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  extensions: { 'offer-receipt': { receipt: 'é' } },
  extensionResponses: { secret: 'server side' },
} as unknown as SettleResponse;

describe('x402 header codec (Buffer base64 of UTF-8 JSON)', () => {
  it('encodes PAYMENT-REQUIRED byte for byte as @x402/core/http does', () => {
    expect(encodePaymentRequiredHeader(paymentRequired)).toBe(x402.encodePaymentRequiredHeader(paymentRequired));
  });

  it('encodes PAYMENT-RESPONSE as @x402/core/http does, without extensionResponses', () => {
    const value = encodePaymentResponseHeader(settle);
    expect(value).toBe(x402.encodePaymentResponseHeader(settle));
    expect(decodePaymentResponseHeader(value)).not.toHaveProperty('extensionResponses');
    expect(decodePaymentResponseHeader(value)).toEqual(x402.decodePaymentResponseHeader(value));
  });

  it('decodes what @x402/core/http encodes, and refuses what it refuses', () => {
    const value = x402.encodePaymentSignatureHeader(paymentRequired as never);
    expect(decodePaymentSignatureHeader(value)).toEqual(x402.decodePaymentSignatureHeader(value));
    for (const bad of ['not base64!', 'e30===', `${value}%`]) {
      expect(() => decodePaymentSignatureHeader(bad)).toThrow();
      expect(() => x402.decodePaymentSignatureHeader(bad)).toThrow();
    }
    expect(() => decodePaymentSignatureHeader(Buffer.from('{not json').toString('base64'))).toThrow();
  });
});
