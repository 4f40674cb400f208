import type { CapabilityDefinition } from '../define.js';
import { sendBundle } from './builder_send_bundle.js';
import { gatewayExecute } from './gateway_execute.js';
import { gatewayHealth } from './gateway_health.js';
import { gatewayJobs } from './gateway_jobs.js';
import { gatewayMcp } from './gateway_mcp.js';
import { gatewayProviders } from './gateway_providers.js';
import { gatewayRegistry } from './gateway_registry.js';
import { walletBalances } from './intelligence_wallet_balances.js';
import { walletMonitor } from './intelligence_wallet_monitor.js';
import { liquidationPlan } from './mev_liquidation_plan.js';
import { liquidationSearch } from './mev_liquidation_search.js';

export {
  sendBundle,
  SendBundleInput,
  SendBundleOutput,
  type SendBundleErrorType,
  type SendBundleParameters,
  type SendBundleReturnType,
} from './builder_send_bundle.js';
export { gatewayExecute, type ExecuteErrorType, type ExecuteParameters, type ExecuteReturnType } from './gateway_execute.js';
export { gatewayHealth, type HealthErrorType, type HealthParameters, type HealthReturnType } from './gateway_health.js';
export { gatewayJobs, type JobsErrorType, type JobsParameters, type JobsReturnType } from './gateway_jobs.js';
export { gatewayMcp, type McpErrorType, type McpParameters, type McpReturnType } from './gateway_mcp.js';
export { gatewayProviders, type ProvidersErrorType, type ProvidersParameters, type ProvidersReturnType } from './gateway_providers.js';
export { gatewayRegistry, type RegistryErrorType, type RegistryParameters, type RegistryReturnType } from './gateway_registry.js';
export {
  WALLET_BALANCES_CHAINS,
  WALLET_BALANCES_ID,
  walletBalances,
  WalletBalancesChain,
  WalletBalancesInput,
  WalletBalancesOutput,
  type WalletBalancesErrorType,
  type WalletBalancesParameters,
  type WalletBalancesReturnType,
} from './intelligence_wallet_balances.js';
export { walletMonitor, type WalletMonitorErrorType, type WalletMonitorParameters, type WalletMonitorReturnType } from './intelligence_wallet_monitor.js';
export {
  LIQUIDATION_PLAN_PRICE_BASE_UNITS,
  liquidationPlan,
  type LiquidationPlanErrorType,
  type LiquidationPlanParameters,
  type LiquidationPlanReturnType,
} from './mev_liquidation_plan.js';
export {
  liquidationSearch,
  type LiquidationSearchErrorType,
  type LiquidationSearchParameters,
  type LiquidationSearchReturnType,
} from './mev_liquidation_search.js';

/**
 * The built-in capabilities, one file each, in catalog order: by product (gateway, builder, mev,
 * intelligence) then id (docs/spec-notes.md 2.1). Nothing here is LIVE: that takes a probe record at build time
 * (docs/decisions.md "Registry, catalog and health").
 */
export const BUILTIN_CAPABILITIES: readonly CapabilityDefinition[] = [
  gatewayExecute,
  gatewayHealth,
  gatewayJobs,
  gatewayMcp,
  gatewayProviders,
  gatewayRegistry,
  sendBundle,
  liquidationPlan,
  liquidationSearch,
  walletBalances,
  walletMonitor,
];
