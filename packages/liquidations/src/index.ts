/**
 * `@acg/liquidations`: liquidation search across Aave v3, Spark, Compound v3 and Morpho Blue
 * (docs/spec-notes.md 2.5, 4; docs/decisions.md "Liquidation search"). Adapters read each protocol with viem multicall and
 * apply its own math; the indexer keeps positions in Redis; the query reads only Redis.
 */
export { aaveV3Adapter, type AaveAdapterOptions } from './adapters/aave.js';
export { compoundV3Adapter, type CometAdapterOptions } from './adapters/comet.js';
export { morphoBlueAdapter, type MorphoAdapterOptions } from './adapters/morpho.js';
export { adapterFor, startLiquidationIndexer, type LiquidationIndexer, type LiquidationIndexerConfig } from './indexer.js';
export { cachedLiquidationSearch, liquidationIndexReady, LiquidationIndexNotReadyError, searchLiquidations } from './query.js';
export { LiquidationIndexStore, PROTOCOLS, type IndexMeta, type PositionWrite } from './store.js';
export { COMET_EXTRA_ASSET_GAS, DEFAULT_GAS_UNITS, gasCostUsd } from './gas.js';
export * as aaveMath from './math/aave.js';
export * as cometMath from './math/comet.js';
export * as morphoMath from './math/morpho.js';
export { aavePoolAbi, cometAbi, morphoAbi } from './abis.js';
export {
  MAX_QUERY_HEALTH_FACTOR,
  type BlockContext,
  type EvaluatedPosition,
  type LiquidationChain,
  type LogScan,
  type PositionRef,
  type PriceBook,
  type ProtocolAdapter,
  type ProtocolDeployment,
} from './types.js';
export {
  aavePlanner,
  aavePlannerWith,
  isPlanRefusal,
  nextBaseFee,
  planGasLimit,
  planLiquidation,
  PLANNERS,
  prepareLiquidationPlan,
  simulatePlanCalls,
  simulatePreparedPlan,
  type AavePlannerOptions,
  type PlanContext,
  type PlanLiquidationOptions,
  type PlannedCall,
  type PlanRefusal,
  type PreparedPlan,
  type ProtocolPlan,
  type ProtocolPlanner,
} from './plans/index.js';
export { cometPlanner } from './plans/comet.js';
export { MORPHO_APPROVAL_SLACK_SECONDS, morphoPlanner } from './plans/morpho.js';
export { readAtTarget } from './plans/atTarget.js';
