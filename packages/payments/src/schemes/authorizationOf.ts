import type { PaymentPayload } from '@x402/core/types';
import { eip3009Authorization } from '../paymentHeader.js';
import { permit2NonceHex, uptoPermit2Authorization } from './upto.js';

/**
 * The payer and single-use nonce of a payload of any scheme this gateway accepts, read without
 * matching it to a 402 (e.g. to bind a quote to the payment that uses it): `exact` → the EIP-3009
 * `from` and `nonce`; `upto` → the Permit2 `from` and nonce (as `0x` + 64 hex digits). Lowercase;
 * undefined for anything else. Never throws.
 */
export function payloadAuthorization(payload: PaymentPayload): { payer: `0x${string}`; nonce: `0x${string}` } | undefined {
  if (payload.accepted?.scheme === 'upto') {
    const read = uptoPermit2Authorization(payload);
    if (!read) return undefined;
    return { payer: read.authorization.from.toLowerCase() as `0x${string}`, nonce: permit2NonceHex(read.authorization.nonce) };
  }
  const auth = eip3009Authorization(payload);
  return auth ? { payer: auth.from.toLowerCase() as `0x${string}`, nonce: auth.nonce } : undefined;
}
