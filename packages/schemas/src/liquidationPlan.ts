import { z } from 'zod';
import { LendingProtocol } from './liquidation.js';
import { ChainName, ChecksumAddress } from './primitives.js';

const BaseUnits = z.string().regex(/^\d+$/, 'must be an integer string (base units)');
const Bytes32 = z.string().regex(/^0x[0-9a-f]{64}$/, 'must be 0x followed by 64 lowercase hex characters');
const HexData = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, 'must be 0x-prefixed hex bytes');

/**
 * Which position to liquidate: the fields of a `LiquidationOpportunity` from
 * `GET /v1/liquidation-search` that identify it. `market` is the contract a liquidator calls
 * (Aave/Spark Pool, Comet, Morpho Blue); `market_id` is the Morpho Blue market id (required for
 * `morpho_blue`). Issue 37 item 1 (docs/liquidation-plans.md).
 */
export const LiquidationPlanOpportunity = z.object({
  protocol: LendingProtocol,
  borrower: ChecksumAddress,
  market: ChecksumAddress,
  collateral_token: ChecksumAddress,
  debt_token: ChecksumAddress,
  market_id: Bytes32.optional(),
});
export type LiquidationPlanOpportunity = z.infer<typeof LiquidationPlanOpportunity>;

/**
 * Input of `mev.liquidation_plan` (REST `POST /v1/liquidation-plans`): `chain` (default
 * `ethereum`), the `opportunity`, and `searcher` (the address that will sign and send the
 * transactions, and that holds the debt asset).
 */
export const LiquidationPlanRequest = z.strictObject({
  chain: ChainName.default('ethereum'),
  opportunity: LiquidationPlanOpportunity,
  searcher: ChecksumAddress,
});
export type LiquidationPlanRequest = z.infer<typeof LiquidationPlanRequest>;

/**
 * One unsigned transaction of a plan, in the order it must run. `value` and `gas` are integer
 * strings (wei, gas units); `purpose` names the protocol call (`approve`, `liquidationCall`,
 * `absorb`, `buyCollateral`, `liquidate`).
 */
export const PlannedTransaction = z.object({
  from: ChecksumAddress,
  to: ChecksumAddress,
  data: HexData,
  value: BaseUnits.describe('wei (integer string)'),
  gas: BaseUnits.describe('gas units (integer string)'),
  purpose: z.string(),
});
export type PlannedTransaction = z.infer<typeof PlannedTransaction>;

/** A token amount moved into or out of the searcher's address by the simulated plan (base units). */
export const PlanTokenFlow = z.object({
  token: ChecksumAddress,
  symbol: z.string(),
  amount: BaseUnits.describe('base units (integer string)'),
  usd: z.number().describe('USD (number)'),
});
export type PlanTokenFlow = z.infer<typeof PlanTokenFlow>;

/**
 * Answer of `mev.liquidation_plan`: the unsigned `transactions` that liquidate the position when
 * they land in `target_block` (the block after `based_on_block`), and what the simulation at that
 * block saw: `gas_used` (integer string, gas units, all transactions), `tokens_in` / `tokens_out`
 * (the searcher's token transfers, base units), `gas_cost_usd` and `profit_usd` (USD numbers; the
 * profit is after gas). `simulation` names the method used (`eth_simulateV1` or `eth_callBundle`).
 */
export const LiquidationPlan = z.object({
  chain: ChainName,
  protocol: LendingProtocol,
  borrower: ChecksumAddress,
  searcher: ChecksumAddress,
  market: ChecksumAddress,
  market_id: Bytes32.optional(),
  based_on_block: z.int().nonnegative(),
  target_block: z.int().nonnegative().describe('based_on_block + 1'),
  transactions: z.array(PlannedTransaction).min(1),
  repay: PlanTokenFlow,
  tokens_in: z.array(PlanTokenFlow).describe('simulated transfers to the searcher, per token'),
  tokens_out: z.array(PlanTokenFlow).describe('simulated transfers from the searcher, per token'),
  gas_used: BaseUnits.describe('gas units (integer string)'),
  base_fee_per_gas: BaseUnits.describe('wei (integer string)'),
  gas_cost_usd: z.number().nonnegative().describe('USD (number)'),
  profit_usd: z.number().describe('USD (number), after gas'),
  simulation: z.object({ method: z.enum(['eth_simulateV1', 'eth_callBundle']), block: z.int().nonnegative() }),
});
export type LiquidationPlan = z.infer<typeof LiquidationPlan>;

/**
 * Why no plan was made: the `reason` member of the 422 problem (never charged: refused before
 * payment, or refunded when only the simulation after payment could tell): `not_liquidatable` (healthy,
 * already liquidated, or no debt), `would_revert` (the simulation reverted; `detail` says where),
 * `unprofitable` (profit after gas ≤ 0), `insufficient_balance` (the searcher lacks the debt asset),
 * `unknown_position`.
 */
export const LiquidationPlanRefusalReason = z.enum(['not_liquidatable', 'would_revert', 'unprofitable', 'insufficient_balance', 'unknown_position']);
export type LiquidationPlanRefusalReason = z.infer<typeof LiquidationPlanRefusalReason>;
