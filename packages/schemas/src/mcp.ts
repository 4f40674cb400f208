import { z } from 'zod';
import { CapabilityStatus, Auth, Product, Surface } from './capability.js';
import { PriceUnit } from './legacyRegistry.js';
import { paymentRequiredFields, X402_VERSION } from './paymentChallenge.js';
import { MAX_JOB_OBJECTIVE_CHARS } from './limits.js';
import { MCP_TOOL_NAME_PATTERN } from './mcpToolName.js';
import { CapabilityId, DecimalString, JsonObject } from './primitives.js';
import { CapabilityOffer } from './routing.js';

/**
 * Wire schemas of the MCP endpoint `{base_url}/mcp` (docs/decisions.md "Agents: MCP and x402 extensions"):
 * the free tools' arguments and results, and the x402 `PaymentRequired` a paid tool answers with
 * (x402 transports-v2/mcp.md). The paid tools' own schemas are their capabilities' definitions.
 */

/** MCP tool name of a capability: its id with the dot replaced by `_` (`mcpToolName`, ./mcpToolName.ts; LLM tool names allow `^[a-zA-Z0-9_-]{1,64}$`). */
export const McpToolName = z.string().regex(MCP_TOOL_NAME_PATTERN, 'must be 1-64 letters, digits, "_" or "-"');
export type McpToolName = z.infer<typeof McpToolName>;

/** Arguments of `search_capabilities`: all optional; `max_price_usdc` keeps capabilities with a fixed price at most this (decimal USDC). */
export const SearchCapabilitiesArguments = z.strictObject({
  query: z.string().max(200).optional().describe('Words matched, case-insensitively, against the id, name and description; every word must match.'),
  product: Product.optional().describe('Only capabilities of this product.'),
  max_price_usdc: z
    .union([DecimalString, z.number().nonnegative()])
    .optional()
    .describe('Only capabilities whose fixed price per unit is at most this many USDC (decimal, e.g. "0.01").'),
});
export type SearchCapabilitiesArguments = z.infer<typeof SearchCapabilitiesArguments>;

/** One capability as `search_capabilities` lists it; `tool` is its MCP tool name when it is executable here, else null. */
export const CapabilitySummary = z.object({
  id: CapabilityId,
  tool: McpToolName.nullable(),
  product: Product,
  name: z.string(),
  description: z.string(),
  status: CapabilityStatus,
  surface: Surface,
  auth: Auth,
  endpoint: z.string(),
  /** decimal USDC, e.g. "0.001"; null when not fixed */
  price_usdc: z.string().nullable(),
  /** integer string, USDC base units (6 decimals); null when not fixed */
  price_base_units: z.string().nullable(),
  price_unit: PriceUnit.nullable(),
  /** A capability offered by several providers: its offers, cheapest first (docs/marketplace.md). */
  offers: z.array(CapabilityOffer).optional(),
});
export type CapabilitySummary = z.infer<typeof CapabilitySummary>;

/** Result of `search_capabilities`: matches in catalog order. */
export const SearchCapabilitiesResult = z.object({ capabilities: z.array(CapabilitySummary) });
export type SearchCapabilitiesResult = z.infer<typeof SearchCapabilitiesResult>;

const CapabilityRef = z.string().min(1).max(128);

/**
 * Arguments of `get_capability`: `capability_id`, as `execute` names it (`intelligence.wallet_balances`,
 * or its MCP tool name `intelligence_wallet_balances`). `id` is the older name of the same argument
 * and is still accepted; give one of them (both only if equal).
 */
export const GetCapabilityArguments = z
  .strictObject({
    capability_id: CapabilityRef.optional().describe('Capability id, e.g. "intelligence.wallet_balances", or its MCP tool name.'),
    id: CapabilityRef.optional().describe('Older name of capability_id, still accepted.'),
  })
  .refine((a) => a.capability_id !== undefined || a.id !== undefined, { message: 'give capability_id', path: ['capability_id'] })
  .refine((a) => a.capability_id === undefined || a.id === undefined || a.capability_id === a.id, {
    message: 'capability_id and id name different capabilities; give capability_id only',
    path: ['id'],
  });
export type GetCapabilityArguments = z.infer<typeof GetCapabilityArguments>;

/** `get_health` takes no arguments. */
export const GetHealthArguments = z.strictObject({});
export type GetHealthArguments = z.infer<typeof GetHealthArguments>;

/**
 * x402 v2 `PaymentRequired` as a paid MCP tool answers it in `structuredContent` (and wrapped in
 * `content[0].text` as `{"x402/error": {code: 402, message, data}}`): `x402Version` 2, `error`,
 * `resource`, `accepts`, `extensions` (`bazaar`, `payment-identifier`); a refused payment adds
 * `reason`, the stable snake_case code.
 */
export const X402PaymentRequired = z.looseObject({ x402Version: z.literal(X402_VERSION) }).extend(paymentRequiredFields);
export type X402PaymentRequired = z.infer<typeof X402PaymentRequired>;

/** A JSON-RPC 2.0 request as `POST {base_url}/mcp` takes it (MCP Streamable HTTP; `method` e.g. `initialize`, `tools/list`, `tools/call`). */
export const McpJsonRpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.int()]),
  method: z.string().min(1),
  params: JsonObject.optional(),
});
export type McpJsonRpcRequest = z.infer<typeof McpJsonRpcRequest>;

/** A JSON-RPC 2.0 response of `POST {base_url}/mcp`: `result` (e.g. `{tools}` or a `CallToolResult`) or `error` `{code, message, data?}`. */
export const McpJsonRpcResponse = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.int()]).nullable(),
  result: JsonObject.optional(),
  error: z.object({ code: z.int(), message: z.string(), data: z.unknown().optional() }).optional(),
});
export type McpJsonRpcResponse = z.infer<typeof McpJsonRpcResponse>;

/**
 * Arguments of the MCP prompt `find_and_pay_for_capability` (MCP prompt arguments are strings):
 * `need`, what the agent wants done in words; `max_price_usdc`, the most it will pay per call
 * (decimal USDC, e.g. "0.01").
 */
export const FindCapabilityPromptArguments = z.strictObject({
  need: z.string().min(1).max(500).describe('What you need done, in words (e.g. "USDC balance of a wallet on Base").'),
  max_price_usdc: DecimalString.optional().describe('The most you will pay per call, in USDC (decimal, e.g. "0.01").'),
});
export type FindCapabilityPromptArguments = z.infer<typeof FindCapabilityPromptArguments>;

/**
 * Arguments of the MCP prompt `run_job_for_objective`: `objective` (the job's objective, at most
 * MAX_JOB_OBJECTIVE_CHARS characters), `budget_usdc` (decimal USDC the job may spend),
 * `capabilities` (optional comma-separated capability ids the job may use).
 */
export const RunJobPromptArguments = z.strictObject({
  objective: z.string().min(1).max(MAX_JOB_OBJECTIVE_CHARS).describe('What the job must achieve, in words.'),
  budget_usdc: DecimalString.describe('The most the job may spend, in USDC (decimal, e.g. "0.05"); the unspent rest is refunded.'),
  capabilities: z
    .string()
    .regex(/^\s*[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*(\s*,\s*[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)*\s*$/, 'must be capability ids separated by commas')
    .optional()
    .describe('Capability ids the job may use, separated by commas (default: let the agent choose from the catalog).'),
});
export type RunJobPromptArguments = z.infer<typeof RunJobPromptArguments>;
