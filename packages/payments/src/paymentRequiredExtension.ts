import { encodePaymentRequiredHeader } from './headerCodec.js';
import type { PaidResponse } from './challenge.js';

/** A 402 answer of the paywall: `PaidResponse` of kind `payment_required`. */
export type PaymentRequiredResponse = Extract<PaidResponse, { kind: 'payment_required' }>;

/**
 * `response` with `info` set as the x402 extension `name` of its PaymentRequired (`extensions[name]`),
 * in the three places a client reads it: `paymentRequired`, the JSON body and the base64
 * `PAYMENT-REQUIRED` header (x402 v2 transport; packages/payments/README.md "Sign-in-with-x"). Extensions already
 * present are kept; `response` is not changed.
 */
export function withPaymentRequiredExtension(response: PaymentRequiredResponse, name: string, info: unknown): PaymentRequiredResponse {
  const extensions = { ...response.paymentRequired.extensions, [name]: info };
  const paymentRequired = { ...response.paymentRequired, extensions };
  return {
    ...response,
    paymentRequired,
    body: { ...response.body, extensions },
    headers: { ...response.headers, 'PAYMENT-REQUIRED': encodePaymentRequiredHeader(paymentRequired) },
  };
}
