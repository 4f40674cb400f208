import { McpJsonRpcRequest, McpJsonRpcResponse } from '@acg/schemas';
import type { z } from 'zod';
import { defineCapability } from '../define.js';
import { WALLET_BALANCES_ID } from './intelligence_wallet_balances.js';

/** One JSON-RPC 2.0 request to `POST {base_url}/mcp` (`initialize`, `tools/list`, `tools/call` ...). */
export type McpParameters = z.input<typeof McpJsonRpcRequest>;
/** The JSON-RPC 2.0 response: `result` or `error`. */
export type McpReturnType = z.infer<typeof McpJsonRpcResponse>;
/** JSON-RPC errors (-32700 parse, -32600 invalid request, -32601 unknown method, -32602 unknown tool); tool failures are `isError` results. */
export type McpErrorType = McpReturnType['error'];

/**
 * `gateway.mcp`: the gateway as an MCP server (Model Context Protocol, Streamable HTTP, stateless:
 * POST only, no session). Tools: one per executable capability (name = its id with the dot
 * replaced by `_`, e.g. `intelligence_wallet_balances`), each paid per call with x402 over MCP
 * (x402 transports-v2/mcp.md: PaymentRequired as an `isError` result, the PaymentPayload in
 * `_meta["x402/payment"]`, the settlement in `_meta["x402/payment-response"]`), plus the free
 * `search_capabilities`, `get_capability` and `get_health`; resources `acg://capabilities/{id}`
 * and prompts (docs/mcp.md). Listing, resources, prompts and the free tools cost nothing; a paid
 * tool costs its capability's price (USDC base units, 6 decimals).
 *
 * @example
 * // MCP host configuration
 * { "mcpServers": { "acg": { "url": "{base_url}/mcp" } } }
 */
export const gatewayMcp = defineCapability({
  id: 'gateway.mcp',
  product: 'gateway',
  name: 'MCP server',
  description:
    'Every executable capability as a Model Context Protocol tool (Streamable HTTP), paid per call with x402 over MCP, ' +
    'plus free tools to search the catalog, read one capability and read health, the catalog as resources (a Markdown page and the JSON Schemas of each capability) and prompts.',
  surface: 'MCP',
  auth: 'x402',
  method: 'POST',
  endpoint: '{base_url}/mcp',
  docs: '{base_url}/llms.txt',
  built: true,
  x402: 'accepted',
  price: null,
  input: McpJsonRpcRequest,
  output: McpJsonRpcResponse,
  example: {
    request: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_capabilities', arguments: { query: 'wallet' } } },
    response: {
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [{ type: 'text', text: '{"capabilities":[{"id":"intelligence.wallet_balances","tool":"intelligence_wallet_balances"}]}' }],
        structuredContent: { capabilities: [{ id: WALLET_BALANCES_ID, tool: 'intelligence_wallet_balances' }] },
      },
    },
  },
  related_capabilities: ['gateway.execute', WALLET_BALANCES_ID],
  notes:
    'POST {base_url}/mcp with Accept: application/json, text/event-stream (GET and DELETE are 405: stateless, no session). ' +
    'The price of a paid tool is that of its capability; tools/list and the free tools cost nothing.',
});
