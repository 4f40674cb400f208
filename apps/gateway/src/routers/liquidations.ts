import { liquidationSearch } from '@acg/capabilities';
import { z } from 'zod';
import { router } from '../trpc/init.js';
import { capabilityRoute } from './capabilityRoute.js';

/**
 * `GET /v1/liquidation-search` (packages/liquidations README), bound to the one definition of
 * `mev.liquidation_search` (`@acg/capabilities`): its price (0.02 USD per query), schemas, index
 * check (503 before any charge) and run. Paid by `Authorization: Bearer` (metered account debit)
 * or x402 per call; the answer is read from the Redis index the liquidation indexer keeps.
 */
export const liquidationsRouter = router({
  search: capabilityRoute(liquidationSearch, {
    operationIdPrefix: 'liq',
    openapi: {
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
  }),
});
