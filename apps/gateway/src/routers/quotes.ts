import { Quote, QuoteRequest } from '@acg/schemas';
import { createQuote } from '../paidRoute/quotes.js';
import { router } from '../trpc/init.js';
import { publicProcedure } from '../trpc/procedures.js';
import { rawError } from '../trpc/problem.js';

/** `POST /api/v1/quotes` (README "Quotes"): a signed price and provider for one capability and one input, held QUOTE_TTL_SECONDS. */
export const quotesRouter = router({
  create: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/quotes',
        tags: ['execute'],
        summary: 'Quote a capability call: a price and a provider held for QUOTE_TTL_SECONDS (default 60)',
        description:
          'Free. Answers 201 {quote_id, capability_id, provider_id, price, price_base_units, currency, input_sha256, expires_at, quote}; `quote` is a JWS (EdDSA, kid of /.well-known/jwks.json, typ acg-quote+jws) of the other fields. POST /api/v1/execute with the same capability_id, the same input and this quote_id pays exactly `price` (the 402 asks for it) on `provider_id`, once: a second execution of the quote is refused (409 quote_used), an expired quote is 410 quote_expired, another input 409 quote_input_mismatch.',
        errorResponses: {
          400: 'Invalid input (problem+json with errors)',
          404: 'Unknown capability',
          422: 'Capability not executable, or no offer matches routing (no_offer)',
          503: 'The offer is suspended (offer_suspended), or no receipt key is loaded (receipts_unavailable)',
        },
      },
    })
    .input(QuoteRequest)
    .output(Quote)
    .mutation(async ({ ctx, input }) => {
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      const r = await createQuote(ctx.services, input);
      if (!r.ok) throw rawError(r.status, r.body);
      ctx.response.status = 201;
      return r.quote;
    }),
});
