import { z } from 'zod';
import { Routing } from './routing.js';
import { ProviderId, QuoteId } from './ids.js';
import { CapabilityId, DateTime, DecimalString, JsonObject, Sha256Hex, UintString } from './primitives.js';

/**
 * Wire schemas of quotes (apps/gateway README "Quotes"): a price and a provider for one capability
 * and one input, held for `QUOTE_TTL_SECONDS`, signed with the receipt key.
 */

/** Routing preferences a quote may carry: the execute request's `routing` (docs/marketplace.md "Routing"); the quote's provider is the first offer of that route. */
export const QuoteRouting = Routing;

/** Body of `POST /api/v1/quotes`. */
export const QuoteRequest = z.strictObject({ capability_id: CapabilityId, input: JsonObject, routing: QuoteRouting.optional() });
export type QuoteRequest = z.infer<typeof QuoteRequest>;

/**
 * A quote: `price` decimal USDC, `price_base_units` integer string (6 decimals), `expires_at` RFC
 * 3339, `input_sha256` the lowercase hex SHA-256 of the RFC 8785 canonical JSON of the input, and
 * `quote` the JWS compact (EdDSA, receipt key, `typ` `acg-quote+jws`) of all the other fields.
 */
export const Quote = z.object({
  quote_id: QuoteId,
  capability_id: CapabilityId,
  /** the provider that will run it; null for the gateway's own capabilities */
  provider_id: ProviderId.nullable(),
  price: DecimalString,
  price_base_units: UintString,
  currency: z.literal('USDC'),
  input_sha256: Sha256Hex,
  expires_at: DateTime,
  quote: z.string(),
});
export type Quote = z.infer<typeof Quote>;
