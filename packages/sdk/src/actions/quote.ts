import type { GatewayContext } from '../context.js';
import type { GatewayError, GatewayRequestError } from '../errors.js';
import { postJson } from './internal.js';

/** Parameters of {@link quote}. */
export interface QuoteParameters {
  /** Capability id as listed in `/registry`. */
  capabilityId: string;
  /** The exact input the quoted execute will send (the quote binds its RFC 8785 canonical SHA-256). */
  input: Record<string, unknown>;
  /** Routing preferences (`max_price_usdc` decimal USDC, `prefer`, `providers`, `exclude`). */
  routing?: { max_price_usdc?: string; prefer?: 'cheapest' | 'fastest' | 'trusted'; providers?: string[]; exclude?: string[] };
}

/**
 * What {@link quote} returns: `quote_id` (`qte_` + ULID), the provider (null for the gateway's own
 * capabilities), `price` (decimal USDC) and `price_base_units` (integer string, 6 decimals),
 * `expires_at` (RFC 3339), and `quote`, the JWS (EdDSA, the gateway's `/.well-known/jwks.json`) of the rest.
 */
export interface QuoteReturnType {
  quote_id: string;
  capability_id: string;
  provider_id: string | null;
  price: string;
  price_base_units: string;
  currency: 'USDC';
  input_sha256: string;
  expires_at: string;
  quote: string;
}

/** Errors of {@link quote}. */
export type QuoteErrorType = GatewayError | GatewayRequestError;

/**
 * `POST /api/v1/quotes` (apps/gateway README "Quotes"): a price and a provider for this capability
 * and this input, held until `expires_at` (QUOTE_TTL_SECONDS, default 60). Free. Pass `quote_id` to
 * {@link execute} with the same input to pay exactly `price`, once.
 *
 * @throws {GatewayError} 400 bad input, 404 unknown capability, 422 no offer matches `routing`, 503 offer suspended.
 *
 * @example
 * const q = await quote(ctx, { capabilityId: 'intelligence.upper', input: { text: 'hi' } })
 * const exe = await execute(ctx, { capabilityId: q.capability_id, input: { text: 'hi' }, quoteId: q.quote_id })
 */
export async function quote(ctx: GatewayContext, params: QuoteParameters): Promise<QuoteReturnType> {
  const { capabilityId, input, routing } = params;
  return postJson<QuoteReturnType>(ctx, '/api/v1/quotes', { capability_id: capabilityId, input, ...(routing ? { routing } : {}) });
}
