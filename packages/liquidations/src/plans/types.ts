import type { LendingProtocol, LiquidationPlanOpportunity, LiquidationPlanRefusalReason } from '@acg/schemas';
import type { Address, Hex, PublicClient } from 'viem';

/**
 * What a protocol planner reads: the node at `blockNumber` (the latest block; the plan targets
 * `blockNumber + 1` at `timestamp` ≈ the next block's), and the searcher who will send the calls.
 */
export interface PlanContext {
  client: PublicClient;
  blockNumber: bigint;
  /** Timestamp the plan assumes for the target block (seconds). */
  timestamp: bigint;
  searcher: Address;
}

/** One call the searcher sends, in order. `purpose`: `approve`, `liquidationCall`, `absorb`, `buyCollateral`, `liquidate`. */
export interface PlannedCall {
  to: Address;
  data: Hex;
  value: bigint;
  purpose: string;
}

/**
 * A protocol's plan before simulation: the calls, the debt token and amount the searcher repays
 * (base units), and the collateral it expects to receive (base units, by token). The simulation
 * (eth_simulateV1 with transfer tracing) then reports what really moves.
 */
export interface ProtocolPlan {
  protocol: LendingProtocol;
  calls: PlannedCall[];
  repay: { token: Address; amount: bigint };
  expectedSeize: { token: Address; amount: bigint }[];
  /**
   * USD per whole token, by lowercase token address, as the protocol's own oracle gives them at
   * `ctx.blockNumber` (Aave/Spark AaveOracle, Comet `getPrice`, ...): they price the plan's token
   * flows. Optional: a token missing here is priced by `planLiquidation`'s `usdPrice` fallback.
   */
  usdPrices?: Record<string, number>;
}

/** A planner's refusal: the reason code and a human sentence. */
export interface PlanRefusal {
  refused: LiquidationPlanRefusalReason;
  detail: string;
}

/**
 * One module per protocol (`aave.ts` for aave_v3 and spark, `comet.ts`, `morpho.ts`), same
 * signature: read the position at `ctx.blockNumber` with the protocol's own math and build the
 * largest liquidation the protocol allows, with an approval first when the allowance is short.
 */
export type ProtocolPlanner = (ctx: PlanContext, opportunity: LiquidationPlanOpportunity) => Promise<ProtocolPlan | PlanRefusal>;
