/**
 * The one mapping between capability ids and MCP tool names, shared by the gateway's MCP server
 * (apps/gateway/src/mcp) and the published SDK (packages/sdk, `mcpToolName`), which bundles this
 * file. It imports nothing, so the SDK's bundle gains no dependency. See apps/gateway/README.md
 * "MCP" for the tool list.
 */

/** What an MCP tool name may be (LLM tool-name rules): 1 to 64 letters, digits, `_` or `-`. No dot. */
export const MCP_TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * MCP tool name of a capability: its id with the dot replaced by `_`
 * (`intelligence.wallet_balances` → `intelligence_wallet_balances`), because tool names may not
 * hold a dot ({@link MCP_TOOL_NAME_PATTERN}). A capability id is `<product>.<name>` of lowercase
 * letters, digits and `_` (packages/schemas `CAPABILITY_ID_PATTERN`).
 */
export function mcpToolName(capabilityId: string): string {
  return capabilityId.replaceAll('.', '_');
}

/**
 * The item of `items` whose capability `id` has the MCP tool name `name`, or undefined. A lookup
 * rather than an inverse formula: a product may hold `_`, so the name alone does not say where
 * the dot was.
 */
export function findByMcpToolName<T extends { id: string }>(items: readonly T[], name: string): T | undefined {
  return items.find((item) => mcpToolName(item.id) === name);
}
