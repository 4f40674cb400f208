import { LiquidationIndexNotReadyError, searchLiquidations } from '@acg/liquidations';
import { LiquidationSearchQuery, LiquidationSearchResponse } from '@acg/schemas';
import { CapabilityFailure, type CapabilityHandler } from './types.js';

/**
 * `mev.liquidation_search` through `POST /api/v1/execute`: the same query as
 * `GET /v1/liquidation-search` (input = its query parameters as JSON: `min_profit_usd`, `chain`,
 * `protocol`, `max_health_factor`, `limit`), answered from the Redis liquidation index
 * (`@acg/liquidations`). Output: `{chain, block_number, opportunities}` sorted by
 * `estimated_profit_usd` descending (USD as JSON numbers, `health_factor` unitless).
 * Fails with CapabilityFailure `index_not_ready` (503, refunded) when the chain is not indexed.
 */
export const liquidationSearch: CapabilityHandler<typeof LiquidationSearchQuery, typeof LiquidationSearchResponse> = {
  id: 'mev.liquidation_search',
  input: LiquidationSearchQuery,
  output: LiquidationSearchResponse,
  precondition(_input, deps) {
    return deps.redis && deps.keys ? undefined : 'The liquidation index is not configured on this gateway.';
  },
  async run(input, deps) {
    try {
      return await searchLiquidations(deps.redis!, deps.keys!, input);
    } catch (e) {
      if (e instanceof LiquidationIndexNotReadyError) throw new CapabilityFailure('index_not_ready', e.message, 503, e);
      throw new CapabilityFailure('index_unavailable', 'The liquidation index could not be read.', 503, e);
    }
  },
};
