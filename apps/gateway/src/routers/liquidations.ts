import { liquidationIndexReady, LiquidationIndexNotReadyError, cachedLiquidationSearch, type LiquidationChain } from '@acg/liquidations';
import { liquidationSearch } from '@acg/capabilities';
import { LiquidationSearchQuery, LiquidationSearchResponse } from '@acg/schemas';
import { ulid } from 'ulid';
import { z } from 'zod';
import { routeBazaar } from '../payment/bazaar.js';
import type { Context } from '../trpc/context.js';
import { router } from '../trpc/init.js';
import { bearerOrPaidProcedure } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';

const CAPABILITY_ID = 'mev.liquidation_search';

/** Price of one query, USDC base units (0.02 USD = 20000), from its definition. */
function price(): bigint {
  return liquidationSearch.price.base_units;
}

/** 503 before any charge when the chain's index has no block yet. */
async function indexReady(input: LiquidationSearchQuery, ctx: Context): Promise<void> {
  if (!(await liquidationIndexReady(ctx.services.redis, ctx.services.keys, input.chain as LiquidationChain))) {
    throw problem(503, `The liquidation index of ${input.chain} is not ready; nothing was charged. Retry later.`, {}, { 'Retry-After': '5' });
  }
}

/**
 * `GET /v1/liquidation-search` (docs/spec-notes.md 4, 2.5; docs/decisions.md "Liquidation search"), 0.02 USD per query,
 * paid by `Authorization: Bearer` (metered account debit) or x402 per call (`bearerOrPaid`).
 * Validation (400) and the index check (503) come before any payment; the answer is read from the
 * Redis index the liquidation indexer keeps (`@acg/liquidations`).
 */
export const liquidationsRouter = router({
  search: bearerOrPaidProcedure({
    input: LiquidationSearchQuery,
    check: indexReady,
    route: 'liquidation_search',
    path: '/v1/liquidation-search',
    item: CAPABILITY_ID,
    price,
    description: () => 'Liquidation search (mev.liquidation_search)',
    extensions: () => routeBazaar(liquidationSearch),
    newOperationId: () => `liq_${ulid()}`,
  })
    .meta({
      openapi: {
        method: 'GET',
        path: '/v1/liquidation-search',
        tags: ['liquidations'],
        summary: 'Imminent liquidations on Aave v3, Spark, Compound v3 and Morpho Blue, by estimated profit',
        description:
          "Served from an index refreshed every block with each protocol's own math (Aave/Spark getUserAccountData and close factors, Comet isLiquidatable/absorb/buyCollateral, Morpho Blue LLTV with accrued interest and the 1e36 oracle price). " +
          "estimated_profit_usd = liquidation bonus on the maximum repayable debt (Comet: the store-front discount on the absorbed collateral) minus gas at the block's base fee. " +
          'Price 0.02 USD per query: Authorization: Bearer <access_token> debits the metered account; without it, the answer is 402 with the x402 challenge (retry with PAYMENT-SIGNATURE). ' +
          'protocol may be repeated (protocol=aave_v3&protocol=spark).',
        protect: true,
        requestHeaders: z.object({
          Authorization: z.string().optional().describe('Bearer <access_token> (metered account)'),
          'PAYMENT-SIGNATURE': z.string().optional().describe('base64 JSON x402 PaymentPayload (v2)'),
        }),
        errorResponses: {
          400: 'Invalid query parameters (problem+json with errors)',
          401: 'Invalid or expired bearer token',
          402: 'Payment required (x402 challenge), or the metered account is below 0.02 USD',
          503: 'The chain is not indexed yet (nothing charged)',
        },
      },
    })
    .output(LiquidationSearchResponse)
    .query(async ({ ctx, input }) => {
      if (ctx.replay) return LiquidationSearchResponse.parse(ctx.replay);
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      try {
        return await cachedLiquidationSearch(ctx.services.redis, ctx.services.keys, input);
      } catch (e) {
        if (e instanceof LiquidationIndexNotReadyError) throw problem(503, e.message, {}, { 'Retry-After': '5' });
        throw e;
      }
    }),
});
