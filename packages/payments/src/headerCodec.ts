import type { PaymentRequired, SettleResponse } from '@x402/core/types';

/** Standard base64 alphabet with up to two `=` of padding: what an x402 header value may hold (x402 v2 HTTP transport). */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The x402 v2 HTTP headers (`PAYMENT-REQUIRED`, `PAYMENT-SIGNATURE`, `PAYMENT-RESPONSE`) are
 * base64 of the UTF-8 bytes of a JSON document (packages/payments/README.md "Headers"). These
 * encode and decode them with `Buffer` in one native pass: the same bytes `@x402/core/http`'s
 * encoders produce (they build a binary string byte by byte for `btoa`, 0.3-0.5 ms per header on
 * this machine, several times per paid call; bench/README.md "Paid execute").
 */
function encodeJsonHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** The JSON document in header value `value`; throws Error when it is not base64 (checked first, as `@x402/core/http` does) or not JSON. */
function decodeJsonHeader(value: string, what: string): unknown {
  if (!BASE64.test(value)) throw new Error(`Invalid ${what} header`);
  return JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
}

/** `PAYMENT-REQUIRED` value of `paymentRequired`. */
export function encodePaymentRequiredHeader(paymentRequired: PaymentRequired): string {
  return encodeJsonHeader(paymentRequired);
}

/** `PAYMENT-RESPONSE` value of `settle`, without its server-side `extensionResponses` (as x402 sends it to the buyer). */
export function encodePaymentResponseHeader(settle: SettleResponse): string {
  const { extensionResponses: _serverSide, ...buyerFacing } = settle as SettleResponse & { extensionResponses?: unknown };
  return encodeJsonHeader(buyerFacing);
}

/** The settlement in a `PAYMENT-RESPONSE` value; throws Error when it is not base64 JSON. */
export function decodePaymentResponseHeader(value: string): SettleResponse {
  return decodeJsonHeader(value, 'payment response') as SettleResponse;
}

/** The payment in a `PAYMENT-SIGNATURE` (or `X-PAYMENT`) value, not yet checked; throws Error when it is not base64 JSON. */
export function decodePaymentSignatureHeader(value: string): unknown {
  return decodeJsonHeader(value, 'payment signature');
}
