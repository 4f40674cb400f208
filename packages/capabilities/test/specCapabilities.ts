/**
 * The ids the built-in capabilities must have, written out apart from them: every capability
 * docs/spec-notes.md 1 and 4 describe, plus `gateway.mcp` (issue 12, docs/decisions.md "Agents: MCP
 * and x402 extensions") and `mev.liquidation_plan` (issue 37, docs/liquidation-plans.md), in catalog order (product gateway, builder, mev, intelligence; then id).
 */
export const SPEC_CAPABILITIES: readonly string[] = [
  'gateway.execute',
  'gateway.health',
  'gateway.jobs',
  'gateway.mcp',
  'gateway.providers',
  'gateway.registry',
  'builder.send_bundle',
  'mev.liquidation_plan',
  'mev.liquidation_search',
  'intelligence.wallet_balances',
  'intelligence.wallet_monitor',
];
