import { LiquidationIndexNotReadyError, cachedLiquidationSearch, liquidationIndexReady, type LiquidationChain } from '@acg/liquidations';
import { LiquidationSearchQuery, LiquidationSearchResponse } from '@acg/schemas';
import type { z } from 'zod';
import { CapabilityFailure, defineCapability } from '../define.js';

/** The query of `GET /v1/liquidation-search` as JSON: `min_profit_usd` (USD, default 0), `chain` (default `ethereum`), `protocol?`, `max_health_factor` (unitless, default 1.0, ≤ 1.1), `limit` (default 50, ≤ 500). */
export type LiquidationSearchParameters = z.input<typeof LiquidationSearchQuery>;
/** `{chain, block_number, opportunities}` sorted by `estimated_profit_usd` descending (USD as JSON numbers, `health_factor` unitless). */
export type LiquidationSearchReturnType = z.infer<typeof LiquidationSearchResponse>;
/** `index_not_ready` / `index_unavailable` (503, refunded). */
export type LiquidationSearchErrorType = CapabilityFailure;

/**
 * `mev.liquidation_search`, 0.02 USDC (20000 base units) per call: the same query as
 * `GET /v1/liquidation-search`, answered from the Redis liquidation index (`@acg/liquidations`).
 * Precondition (422): Redis is configured. Fails with `index_not_ready` (503, refunded) when the
 * chain is not indexed yet.
 *
 * @example
 * // POST {base_url}/api/v1/execute
 * { "capability_id": "mev.liquidation_search", "input": { "min_profit_usd": 100, "chain": "ethereum" } }
 */
export const liquidationSearch = defineCapability({
  id: 'mev.liquidation_search',
  product: 'mev',
  name: 'Liquidation search',
  description: 'Returns imminent liquidation opportunities on Aave v3, Spark, Compound v3 and Morpho Blue, sorted by estimated profit.',
  surface: 'REST',
  auth: 'bearer',
  method: 'GET',
  endpoint: '{base_url}/v1/liquidation-search',
  docs: '{base_url}/openapi.json',
  built: true,
  x402: 'accepted',
  price: { base_units: 20_000n, unit: 'call' },
  input: LiquidationSearchQuery,
  output: LiquidationSearchResponse,
  example: {
    request: { capability_id: 'mev.liquidation_search', input: { min_profit_usd: 100, chain: 'ethereum' } },
    response: {
      execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8V',
      status: 'SUCCEEDED',
      payment: { tx_hash: '0x7a2c1e8d3b4a69707182930a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7f', amount: '20000' },
      result: {
        chain: 'ethereum',
        block_number: 24190512,
        opportunities: [
          {
            protocol: 'aave_v3',
            borrower: '0x486f27d2B5E3d8b5FD9C0a9b6c3D7a4e8f1b2C3D',
            collateral_token: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
            collateral_symbol: 'WETH',
            debt_token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
            debt_symbol: 'USDC',
            collateral_usd: 80000,
            debt_usd: 68041.24,
            health_factor: 0.97,
            estimated_profit_usd: 1530.12,
            deadline_block: 24190513,
            market: '0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2',
            max_repay_amount: '34020618557',
            max_repay_usd: 34020.62,
            gas_cost_usd: 0.81,
          },
        ],
      },
    },
  },
  notes:
    'Examples show POST {base_url}/api/v1/execute; the same query is GET {base_url}/v1/liquidation-search?min_profit_usd=100&chain=ethereum, whose body is the result. ' +
    'GET with query parameters (protocol may be repeated); Authorization: Bearer <token> debits the metered account, or pay per call with x402 (402 challenge). ' +
    'Spec target latency about 180 ms p50.',
  // reads the index only: may start while the payment settles
  readOnly: true,
  precondition(_input, deps) {
    return deps.redis && deps.keys ? undefined : 'The liquidation index is not configured on this gateway.';
  },
  /** Before payment on `GET /v1/liquidation-search`: the chain's index has a block (503, nothing charged). */
  async ready(input, deps) {
    if (!(await liquidationIndexReady(deps.redis!, deps.keys!, input.chain as LiquidationChain))) {
      throw new CapabilityFailure('index_not_ready', `The liquidation index of ${input.chain} is not ready; nothing was charged. Retry later.`, 503);
    }
  },
  async run(input, deps) {
    try {
      return await cachedLiquidationSearch(deps.redis!, deps.keys!, input);
    } catch (e) {
      if (e instanceof LiquidationIndexNotReadyError) throw new CapabilityFailure('index_not_ready', e.message, 503, e);
      throw new CapabilityFailure('index_unavailable', 'The liquidation index could not be read.', 503, e);
    }
  },
});
