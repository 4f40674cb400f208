import { liquidationPlan, liquidationSearch } from '@acg/capabilities';
import { z } from 'zod';
import { router } from '../trpc/init.js';
import { capabilityRoute } from './capabilityRoute.js';

/**
 * `GET /v1/liquidation-search` and `POST /v1/liquidation-plans` (packages/liquidations README), bound to the one definition of
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
  /**
   * `POST /v1/liquidation-plans` (`mev.liquidation_plan`, docs/liquidation-plans.md): 0.05 USD per plan;
   * the planner runs before payment (422 refusals are free), the simulation after (422 refunded).
   */
  plan: capabilityRoute(liquidationPlan, {
    operationIdPrefix: 'lqp',
    openapi: {
      tags: ['liquidations'],
      summary: 'The unsigned transactions that liquidate one opportunity at the next block, simulated',
      description:
        'Takes an opportunity from GET /v1/liquidation-search (protocol, borrower, market, collateral_token, debt_token, market_id for Morpho Blue) and the searcher address. ' +
        "Answers the transactions to sign in order (approval when the allowance is short, then the protocol's liquidation call with the largest amount it allows) for target_block = the next block, " +
        'simulated there with eth_simulateV1: gas_used, tokens_in/tokens_out of the searcher (base units as integer strings), gas_cost_usd at the target base fee and profit_usd after gas (USD numbers). ' +
        'Price 0.05 USD per plan: Authorization: Bearer <access_token> debits the metered account; without it, the answer is 402 with the x402 challenge. ' +
        'Refusals are 422 problem+json with reason: not_liquidatable, unknown_position, insufficient_balance before any payment; would_revert, unprofitable after it, refunded.',
      protect: true,
      requestHeaders: z.object({
        Authorization: z.string().optional().describe('Bearer <access_token> (metered account)'),
        'PAYMENT-SIGNATURE': z.string().optional().describe('base64 JSON x402 PaymentPayload (v2)'),
      }),
      errorResponses: {
        400: 'Invalid body (problem+json with errors)',
        401: 'Invalid or expired bearer token',
        402: 'Payment required (x402 challenge), or the metered account is below 0.05 USD',
        422: 'Refused: reason not_liquidatable | unknown_position | insufficient_balance (before payment, nothing charged) or would_revert | unprofitable (refunded)',
        503: 'The chain is not indexed yet or could not be read (nothing charged)',
      },
    },
  }),
});
