import { z } from 'zod';
import { ChainName, ChecksumAddress } from './primitives.js';

/** Lending protocols searched: `aave_v3 | spark | compound_v3 | morpho_blue` (docs/decisions.md "Liquidation search"). */
export const LendingProtocol = z.enum(['aave_v3', 'spark', 'compound_v3', 'morpho_blue']);
export type LendingProtocol = z.infer<typeof LendingProtocol>;

/**
 * One liquidation opportunity (docs/spec-notes.md 2.5, types per docs/decisions.md): `protocol`, `borrower` (checksummed),
 * `collateral_token`/`debt_token` (checksummed token addresses) with `collateral_symbol`/`debt_symbol`,
 * `collateral_usd`, `debt_usd`, `estimated_profit_usd` (USD as JSON numbers; profit net of gas),
 * `health_factor` (unitless, < 1 means liquidatable), `deadline_block` (integer block number by
 * which the liquidation must land to be valid on the state read).
 *
 * What a searcher needs to act on it (optional members, always sent by this gateway):
 * `market` (the contract to call: Aave/Spark Pool, Comet, Morpho Blue), `market_id` (Morpho Blue
 * market id, bytes32 hex), `max_repay_amount` (integer string, base units of `debt_token`: the most
 * debt one liquidation may repay under the protocol's close-factor rules; for Comet the base paid to
 * buy the absorbed collateral), `max_repay_usd` and `gas_cost_usd` (USD, JSON numbers; the gas at
 * the block's base fee is already subtracted from `estimated_profit_usd`).
 */
export const LiquidationOpportunity = z.object({
  protocol: LendingProtocol,
  borrower: ChecksumAddress,
  collateral_token: ChecksumAddress,
  collateral_symbol: z.string(),
  debt_token: ChecksumAddress,
  debt_symbol: z.string(),
  collateral_usd: z.number().nonnegative(),
  debt_usd: z.number().nonnegative(),
  health_factor: z.number().nonnegative(),
  estimated_profit_usd: z.number(),
  deadline_block: z.int().nonnegative(),
  market: ChecksumAddress.optional(),
  market_id: z
    .string()
    .regex(/^0x[0-9a-f]{64}$/, 'must be 0x followed by 64 lowercase hex characters')
    .optional(),
  max_repay_amount: z.string().regex(/^\d+$/, 'must be an integer string (base units)').optional(),
  max_repay_usd: z.number().nonnegative().optional(),
  gas_cost_usd: z.number().nonnegative().optional(),
});
export type LiquidationOpportunity = z.infer<typeof LiquidationOpportunity>;

/**
 * Query of `GET /v1/liquidation-search` (docs/spec-notes.md 4 + docs/decisions.md). Numbers are coerced from query strings.
 * `min_profit_usd` (USD, default 0), `chain` (default `ethereum`), `protocol` (one or repeated;
 * absent = all), `max_health_factor` (unitless, default 1.0 = liquidatable now, at most 1.1),
 * `limit` (1..500, default 50). Unknown parameters are refused (400), so a typo never widens a search.
 */
export const LiquidationSearchQuery = z.strictObject({
  min_profit_usd: z.coerce.number().nonnegative().default(0),
  chain: ChainName.default('ethereum'),
  protocol: z.union([LendingProtocol, z.array(LendingProtocol)]).optional(),
  max_health_factor: z.coerce.number().positive().max(1.1).default(1),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
export type LiquidationSearchQuery = z.infer<typeof LiquidationSearchQuery>;

/**
 * Response of `GET /v1/liquidation-search` (docs/spec-notes.md 4 + docs/decisions.md): `chain`, `block_number` (integer,
 * the block the index was read at) and `opportunities` sorted by `estimated_profit_usd` descending.
 */
export const LiquidationSearchResponse = z.object({
  chain: ChainName,
  block_number: z.int().nonnegative(),
  opportunities: z.array(LiquidationOpportunity),
});
export type LiquidationSearchResponse = z.infer<typeof LiquidationSearchResponse>;
