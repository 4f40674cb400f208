import type { CapabilityCatalog, ExecutableCapability } from '@acg/capabilities';
import { formatUsdc, inputJsonSchema, outputJsonSchema } from '@acg/registry';
import { mcpToolName, toJsonSchema, X402PaymentRequired, type JsonSchema } from '@acg/schemas';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { embeddable } from '../paidRoute/bazaar.js';
import { FREE_TOOLS, type FreeTool } from './freeTools.js';
import { JOBS_TOOL, jobsTool } from './jobTool.js';

/** What a tool name resolves to: a free tool, or the executable capability it runs (paid with x402). */
export type ResolvedTool = { kind: 'free'; tool: FreeTool } | { kind: 'paid'; definition: ExecutableCapability } | { kind: 'jobs' };

/** The tools of one catalog version: the `tools/list` answer and the name index. */
interface ToolSet {
  version: number;
  tools: Tool[];
  byName: Map<string, ResolvedTool>;
}

/** JSON Schema of x402's PaymentRequired, which a paid tool answers (isError) before it is paid. */
const PAYMENT_REQUIRED_SCHEMA = embeddable(toJsonSchema(X402PaymentRequired));

/**
 * The MCP tools of this gateway, computed from the capability catalog as it is now (so provider
 * capabilities come and go with the catalog), cached per `catalog.version`:
 * - one paid tool per executable capability: `name` from `mcpToolName` (@acg/schemas), `title` and
 *   `_meta.capability_id` = the capability id, `inputSchema` = the capability's published input
 *   schema, `outputSchema` = `anyOf` its result schema and x402's `PaymentRequired` (the MCP SDK
 *   client validates `structuredContent` against it even when `isError` is true; docs/pitfalls.md),
 *   `_meta` with the price; a contract with several offers lists them (provider, id, price) in its description;
 * - the free tools `search_capabilities`, `get_capability`, `get_health` (freeTools.ts);
 * - `gateway_jobs` (jobTool.ts), a job paid for its budget, optionally run as an MCP task.
 */
export class McpTools {
  private set?: ToolSet;

  constructor(private readonly catalog: Pick<CapabilityCatalog, 'executable' | 'version'>) {}

  /** Every tool, for `tools/list`. */
  list(): Tool[] {
    return this.current().tools;
  }

  /** The tool named `name`, or undefined. */
  resolve(name: string): ResolvedTool | undefined {
    return this.current().byName.get(name);
  }

  private current(): ToolSet {
    const version = this.catalog.version;
    if (this.set?.version !== version) this.set = build(version, this.catalog.executable());
    return this.set;
  }
}

function build(version: number, executables: readonly ExecutableCapability[]): ToolSet {
  const tools: Tool[] = [];
  const byName = new Map<string, ResolvedTool>();
  for (const tool of FREE_TOOLS) {
    tools.push(tool.tool);
    byName.set(tool.tool.name, { kind: 'free', tool });
  }
  // jobs, paid with x402 for their budget and callable as MCP tasks (jobTool.ts)
  tools.push(jobsTool());
  byName.set(JOBS_TOOL, { kind: 'jobs' });
  for (const d of executables) {
    const name = mcpToolName(d.id);
    if (byName.has(name)) continue;
    tools.push(paidTool(d, name));
    byName.set(name, { kind: 'paid', definition: d });
  }
  return { version, tools, byName };
}

/** A paid tool's listing (see {@link McpTools}). */
function paidTool(d: ExecutableCapability, name: string): Tool {
  const price = d.price.base_units;
  const result = objectSchema(outputJsonSchema(d));
  return {
    name,
    title: d.id,
    description:
      `${d.description} Costs ${formatUsdc(price)} USDC per ${d.price.unit}, paid with x402: called without ` +
      '_meta["x402/payment"] it answers the x402 PaymentRequired (isError); sign one of its `accepts` and call again with the PaymentPayload in _meta["x402/payment"].' +
      (d.offers && d.offers.length > 1 ? ` Offers: ${d.offers.map((o) => `${o.provider} (${o.provider_id}) ${o.price_usdc} USDC`).join('; ')}.` : '') +
      (d.provider
        ? ` ${d.notes ?? ''} Choose among its offers with _meta.routing {max_price_usdc, prefer: cheapest|fastest|trusted, providers, exclude}: the PaymentRequired asks the route's highest price: paid with \`exact\` the rest is refunded; when the offers ask different prices it also offers \`upto\` (a Permit2 ceiling), which settles only the answering offer's price, with no refund. search_capabilities lists the offers.`
        : ''),
    inputSchema: toolSchema(inputJsonSchema(d)),
    ...(result ? { outputSchema: { type: 'object', anyOf: [result, PAYMENT_REQUIRED_SCHEMA] } } : {}),
    annotations: { title: d.name, openWorldHint: true },
    _meta: {
      capability_id: d.id,
      price_base_units: price.toString(),
      price_usdc: formatUsdc(price),
      price_unit: d.price.unit,
      payment: 'x402',
    },
  };
}

/** A JSON Schema usable as an MCP `inputSchema`: without `$schema` (MCP's default dialect is 2020-12), with `type: "object"` at the root. */
export function toolSchema(schema: JsonSchema | null): Tool['inputSchema'] {
  if (!schema) return { type: 'object' };
  return { ...embeddable(schema), type: 'object' } as Tool['inputSchema'];
}

/** The schema when it describes an object (an MCP result must be one), else undefined. */
function objectSchema(schema: JsonSchema | null): JsonSchema | undefined {
  if (!schema) return undefined;
  const s = embeddable(schema);
  return s.type === 'object' ? s : undefined;
}
