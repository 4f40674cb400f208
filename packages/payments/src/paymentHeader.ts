import { decodePaymentSignatureHeader } from './headerCodec.js';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { getEvmChainIdV1 } from '@x402/evm/v1';
import type { Eip3009Authorization } from '@acg/treasury';
import { PaymentError } from './errors.js';

export type { Eip3009Authorization };

/** The headers a paid retry may carry, in the order they are read (docs/decisions.md "x402 payments"). */
export const PAYMENT_HEADERS = ['payment-signature', 'x-payment'] as const;

/**
 * Reads the x402 payment from request headers: v2 `PAYMENT-SIGNATURE`, or the legacy `X-PAYMENT`
 * carrying a v2 or a v1 payload (see {@link parsePaymentPayload}).
 *
 * Returns `undefined` when no payment header is present.
 * Throws {@link PaymentError} `invalid_payment_header` for a header that is not base64 JSON of a payload.
 */
export function readPaymentPayload(getHeader: (name: string) => string | undefined, accepts: PaymentRequirements[]): PaymentPayload | undefined {
  let raw: string | undefined;
  for (const name of PAYMENT_HEADERS) {
    raw = getHeader(name);
    if (raw) break;
  }
  if (!raw) return undefined;
  let decoded: unknown;
  try {
    decoded = decodePaymentSignatureHeader(raw.trim());
  } catch {
    throw new PaymentError('invalid_payment_header', 'The payment header is not base64-encoded JSON of an x402 PaymentPayload.');
  }
  return parsePaymentPayload(decoded, accepts);
}

/**
 * Checks an already-decoded x402 payment, wherever it came from (a header, or MCP's
 * `_meta["x402/payment"]`, x402 transports-v2/mcp.md): a v2 `PaymentPayload` is returned as is; a v1
 * payload (`{x402Version:1, scheme, network:"base", payload}`) is lifted to v2 by matching it against
 * `accepts` (same scheme, same chain), which the reference server refuses and we accept.
 *
 * Throws {@link PaymentError}: `invalid_payment_header` (not a payload object), `invalid_x402_version`,
 * `unsupported_network`, `unsupported_scheme`.
 */
export function parsePaymentPayload(decoded: unknown, accepts: PaymentRequirements[]): PaymentPayload {
  if (!decoded || typeof decoded !== 'object' || Array.isArray(decoded)) {
    throw new PaymentError('invalid_payment_header', 'The payment is not an x402 PaymentPayload object.');
  }
  const p = decoded as Record<string, unknown>;
  if (p.x402Version === 2) {
    if (!p.accepted || typeof p.accepted !== 'object' || !p.payload || typeof p.payload !== 'object') {
      throw new PaymentError('invalid_payment_header', 'An x402 v2 PaymentPayload needs `accepted` and `payload` objects.');
    }
    return p as unknown as PaymentPayload;
  }
  if (p.x402Version === 1) {
    if (typeof p.scheme !== 'string' || typeof p.network !== 'string' || !p.payload || typeof p.payload !== 'object') {
      throw new PaymentError('invalid_payment_header', 'An x402 v1 payment needs `scheme`, `network` and `payload`.');
    }
    let chainId: number;
    try {
      chainId = getEvmChainIdV1(p.network as never);
    } catch {
      throw new PaymentError('unsupported_network', `The v1 network "${String(p.network).slice(0, 40)}" is not accepted here.`);
    }
    const accepted = accepts.find((r) => r.scheme === p.scheme && r.network === `eip155:${chainId}`);
    if (!accepted) {
      throw new PaymentError(
        'unsupported_scheme',
        `No accepted payment matches scheme "${String(p.scheme).slice(0, 20)}" on ${String(p.network).slice(0, 40)}.`,
      );
    }
    return { x402Version: 2, accepted, payload: p.payload as Record<string, unknown> };
  }
  throw new PaymentError('invalid_x402_version', 'x402Version must be 2 (or 1 for legacy payloads).');
}

/**
 * The EIP-3009 authorization inside an exact-scheme payload, or undefined for another
 * transfer method (e.g. Permit2), which this gateway does not accept.
 */
export function eip3009Authorization(payload: PaymentPayload): Eip3009Authorization | undefined {
  const auth = (payload.payload as { authorization?: Record<string, unknown> }).authorization;
  if (!auth || typeof auth !== 'object') return undefined;
  const hex = (v: unknown, len?: number) => typeof v === 'string' && /^0x[0-9a-fA-F]*$/.test(v) && (len === undefined || v.length === len + 2);
  const int = (v: unknown) => (typeof v === 'string' || typeof v === 'number') && /^[0-9]+$/.test(String(v));
  if (!hex(auth.from, 40) || !hex(auth.to, 40) || !hex(auth.nonce, 64) || !int(auth.value) || !int(auth.validAfter) || !int(auth.validBefore)) {
    return undefined;
  }
  return {
    from: auth.from as `0x${string}`,
    to: auth.to as `0x${string}`,
    value: String(auth.value),
    validAfter: String(auth.validAfter),
    validBefore: String(auth.validBefore),
    nonce: (auth.nonce as string).toLowerCase() as `0x${string}`,
  };
}
