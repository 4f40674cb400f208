import {
  GetCapabilityArguments,
  GetHealthArguments,
  HealthDocument,
  LegacyRegistryEntry,
  findByMcpToolName,
  mcpToolName,
  SearchCapabilitiesArguments,
  SearchCapabilitiesResult,
  toJsonSchema,
  type CapabilitySummary,
} from '@acg/schemas';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { embeddable } from '../paidRoute/bazaar.js';
import type { Services } from '../services.js';
import { toolError, toolResult } from './results.js';

/** A free MCP tool: its listing and what it does with validated arguments. */
export interface FreeTool {
  tool: Tool;
  call(services: Services, args: unknown): Promise<CallToolResult>;
}

/** A free tool from zod `args` and `result` schemas (packages/schemas/src/mcp.ts): arguments are validated, invalid ones are a tool error naming each issue. */
function freeTool<A extends z.ZodType, R extends z.ZodType>(p: {
  name: string;
  title: string;
  description: string;
  args: A;
  result: R;
  run(services: Services, args: z.output<A>): Promise<z.input<R> | CallToolResult>;
}): FreeTool {
  return {
    tool: {
      name: p.name,
      title: p.title,
      description: p.description,
      inputSchema: { ...embeddable(toJsonSchema(p.args, { io: 'input' })), type: 'object' } as Tool['inputSchema'],
      outputSchema: { ...embeddable(toJsonSchema(p.result)), type: 'object' } as Tool['outputSchema'],
      annotations: { title: p.title, readOnlyHint: true, openWorldHint: false },
      _meta: { price_base_units: '0', payment: 'none' },
    },
    async call(services, raw) {
      const parsed = p.args.safeParse(raw ?? {});
      if (!parsed.success) {
        return toolError(400, `Invalid arguments for ${p.name}.`, {
          errors: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message, code: i.code })),
        });
      }
      const out = await p.run(services, parsed.data);
      if (out && typeof out === 'object' && 'content' in out && Array.isArray((out as CallToolResult).content)) return out as CallToolResult;
      return toolResult(out as Record<string, unknown>);
    },
  };
}

/** Decimal USDC (string or number) → integer base units, or undefined when not representable. */
function usdcBaseUnits(v: string | number): bigint | undefined {
  const s = typeof v === 'number' ? v.toFixed(6) : v;
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) return undefined;
  return BigInt(m[1]) * 1_000_000n + BigInt((m[2] ?? '').slice(0, 6).padEnd(6, '0'));
}

/** `search_capabilities`: the catalog filtered by words, product and maximum price; each match names its MCP tool. */
const searchCapabilities = freeTool({
  name: 'search_capabilities',
  title: 'Search capabilities',
  description:
    'Searches the capability catalog (free). Every word of `query` must appear in the id, name or description; `product` and `max_price_usdc` narrow it. ' +
    'Each result has its status (LIVE only with a passing probe), price and, when it can be called here, the MCP tool name.',
  args: SearchCapabilitiesArguments,
  result: SearchCapabilitiesResult,
  async run(services, args) {
    const registry = (await services.discovery.registry()).value;
    const executable = new Set(services.catalog.executable().map((d) => d.id));
    const words = (args.query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const max = args.max_price_usdc === undefined ? undefined : usdcBaseUnits(args.max_price_usdc);
    const capabilities: CapabilitySummary[] = [];
    for (const c of registry.capabilities) {
      if (args.product && c.product !== args.product) continue;
      const text = `${c.id} ${c.name} ${c.description ?? ''}`.toLowerCase();
      if (!words.every((w) => text.includes(w))) continue;
      if (max !== undefined && (c.price_base_units === null || BigInt(c.price_base_units) > max)) continue;
      capabilities.push({
        id: c.id,
        tool: executable.has(c.id) ? mcpToolName(c.id) : null,
        product: c.product,
        name: c.name,
        description: c.description ?? '',
        status: c.status,
        surface: c.surface,
        auth: c.auth,
        endpoint: c.endpoint,
        price_usdc: c.price,
        price_base_units: c.price_base_units,
        price_unit: c.price_unit,
        // a capability offered by several providers: each offer's price, speed, success rate, trust score and status (docs/marketplace.md)
        ...(c.offers ? { offers: c.offers } : {}),
      });
    }
    return { capabilities };
  },
});

/** `get_capability`: one /registry entry (schemas, price, x402 terms, status and evidence, examples) by `capability_id` (or its older name `id`): a capability id or tool name. */
const getCapability = freeTool({
  name: 'get_capability',
  title: 'Get a capability',
  description:
    'Returns one capability of the catalog (free) by capability_id (e.g. "intelligence.wallet_balances", or its MCP tool name; `id` is accepted as an older name): description, status with its evidence, price, x402 terms, input and output JSON Schemas, and an example request and response.',
  args: GetCapabilityArguments,
  result: LegacyRegistryEntry,
  async run(services, args) {
    const registry = (await services.discovery.registry()).value;
    const ref = args.capability_id ?? args.id ?? '';
    const entry = registry.capabilities.find((c) => c.id === ref) ?? findByMcpToolName(registry.capabilities, ref);
    if (!entry) return toolError(404, `Unknown capability "${ref.slice(0, 128)}". Call search_capabilities for the list.`);
    return entry;
  },
});

/** `get_health`: the /status/health document (measured statuses and latencies, builder state). */
const getHealth = freeTool({
  name: 'get_health',
  title: 'Gateway health',
  description:
    'Returns the gateway health document (free): the operational status, each capability status (up, degraded, down, planned) with measured p50/p99 latency, and the builder relays.',
  args: GetHealthArguments,
  result: HealthDocument,
  async run(services) {
    return (await services.discovery.health()).value;
  },
});

/** The free tools, listed first by `tools/list`. */
export const FREE_TOOLS: readonly FreeTool[] = [searchCapabilities, getCapability, getHealth];
