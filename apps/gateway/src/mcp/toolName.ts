/**
 * MCP tool name of a capability (docs/decisions.md "Agents: MCP and x402 extensions"): its id with the dot
 * replaced by `_` (`intelligence.wallet_balances` → `intelligence_wallet_balances`), because LLM
 * tool-name rules (`^[a-zA-Z0-9_-]{1,64}$`) forbid dots. Capability ids are
 * `<product>.<name>` of lowercase letters, digits and `_`, and products hold no `_`, so the name
 * maps back to one id.
 */
export function toolName(capabilityId: string): string {
  return capabilityId.replaceAll('.', '_');
}
