import type { CapabilityDefinition } from '@acg/capabilities';
import { inputJsonSchema, outputJsonSchema } from '@acg/registry';
import { DepositRequest, DepositResponse, toJsonSchema, type JsonSchema } from '@acg/schemas';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';

/**
 * x402 Bazaar discovery declarations (`extensions.bazaar` of a 402 PaymentRequired; x402
 * `specs/extensions/bazaar.md`, docs/decisions.md "Agents: MCP and x402 extensions"), built with
 * `@x402/extensions/bazaar`'s own `declareDiscoveryExtension` (and, for HTTP routes, its resource
 * server extension's `enrichDeclaration`, which adds the method as the x402 HTTP server would), so
 * an x402 Bazaar-style indexer can list every paid route and tool with its input and output schema.
 * The input example must be valid against the input schema, and the output example against the
 * output schema (the extension's own JSON Schema checks both); without an output example the
 * declaration has no output part.
 */

/** A schema and an example valid against it. */
export interface SchemaWithExample {
  schema: JsonSchema;
  example?: unknown;
}

/** What {@link httpBazaar} declares for one REST route. */
export interface HttpBazaarParameters {
  method: 'GET' | 'POST';
  /** Query parameters (GET) or JSON body (POST): their JSON Schema and an example. */
  input: SchemaWithExample;
  /** The success body: its JSON Schema and an example. */
  output?: SchemaWithExample;
}

/** `{bazaar}` for a paid REST route (GET: query parameters; POST: JSON body). */
export function httpBazaar(p: HttpBazaarParameters): Record<string, unknown> {
  const input = isObject(p.input.example) ? p.input.example : undefined;
  const output = outputPart(p.output);
  const declared =
    p.method === 'GET'
      ? declareDiscoveryExtension({ input, inputSchema: embeddable(p.input.schema), ...(output ? { output } : {}) })
      : declareDiscoveryExtension({ bodyType: 'json', input, inputSchema: embeddable(p.input.schema), ...(output ? { output } : {}) });
  // the x402 HTTP resource server adds the method at request time; this gateway serves its own 402s
  const enriched = bazaarResourceServerExtension.enrichDeclaration!(declared.bazaar, { method: p.method, adapter: {} });
  return { bazaar: enriched };
}

/** What {@link mcpBazaar} declares for one MCP tool. */
export interface McpBazaarParameters {
  toolName: string;
  description: string;
  /** The tool's `inputSchema` and an example of its arguments. */
  input: SchemaWithExample;
  /** The tool's result (`structuredContent`) schema and an example. */
  output?: SchemaWithExample;
}

/** `{bazaar}` for a paid MCP tool (transport `streamable-http`). */
export function mcpBazaar(p: McpBazaarParameters): Record<string, unknown> {
  const output = outputPart(p.output);
  return declareDiscoveryExtension({
    toolName: p.toolName,
    description: p.description,
    transport: 'streamable-http',
    inputSchema: embeddable(p.input.schema),
    ...(isObject(p.input.example) ? { example: p.input.example } : {}),
    ...(output ? { output } : {}),
  });
}

const executeCache = new WeakMap<CapabilityDefinition, Record<string, unknown>>();

/**
 * `{bazaar}` of `POST /api/v1/execute` for one capability: the body `{capability_id, input}` with
 * that capability's input schema, and the SUCCEEDED execution `{execution_id, status, result,
 * payment}` with its output schema (built once per definition).
 */
export function executeBazaar(d: CapabilityDefinition): Record<string, unknown> {
  let hit = executeCache.get(d);
  if (!hit) {
    const inputSchema = inputJsonSchema(d) ?? { type: 'object' };
    const outputSchema = outputJsonSchema(d) ?? { type: 'object' };
    const request = d.example.request;
    const example = isObject(request) && 'capability_id' in request && 'input' in request ? request : { capability_id: d.id, input: request ?? {} };
    hit = httpBazaar({
      method: 'POST',
      input: {
        schema: {
          type: 'object',
          properties: { capability_id: { type: 'string', const: d.id }, input: embeddable(inputSchema) },
          required: ['capability_id', 'input'],
          additionalProperties: false,
        },
        example,
      },
      output: {
        schema: {
          type: 'object',
          properties: {
            execution_id: { type: 'string', pattern: '^exe_[0-9A-HJKMNP-TV-Z]{26}$' },
            status: { type: 'string', const: 'SUCCEEDED' },
            result: embeddable(outputSchema),
            payment: {
              type: 'object',
              properties: { tx_hash: { type: 'string' }, amount: { type: 'string', pattern: '^[0-9]+$' } },
              required: ['tx_hash', 'amount'],
            },
          },
          required: ['execution_id', 'status', 'result', 'payment'],
        },
        // only an example in execute form (a JSON-RPC capability's example is its own wire answer)
        example: isExecution(d.example.response) ? d.example.response : undefined,
      },
    });
    executeCache.set(d, hit);
  }
  return hit;
}

/** The example `result` inside a capability's example response when that is a SUCCEEDED execution, if any. */
export function exampleResult(d: CapabilityDefinition): unknown {
  const response = d.example.response;
  return isExecution(response) ? response.result : undefined;
}

/** An example response in execute form: `{execution_id, status, result, payment}`. */
function isExecution(v: unknown): v is { execution_id: string; result: unknown } {
  return isObject(v) && typeof v.execution_id === 'string' && 'result' in v;
}

/** The example input inside a capability's example request (`{capability_id, input}` or the bare input), if any. */
export function exampleInput(d: CapabilityDefinition): unknown {
  const request = d.example.request;
  return isObject(request) && 'capability_id' in request && 'input' in request ? request.input : (request ?? undefined);
}

/** A schema to nest inside another: without the root-only `$schema` and `$id`. */
export function embeddable(schema: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

function outputPart(output: SchemaWithExample | undefined): { example: unknown; schema: JsonSchema } | undefined {
  if (!output || output.example === undefined || output.example === null) return undefined;
  return { example: output.example, schema: embeddable(output.schema) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `{bazaar}` of a paid REST route that is itself one capability (its endpoint, method, schemas and example), built once. */
export function routeBazaar(d: CapabilityDefinition): Record<string, unknown> {
  let hit = routeCache.get(d);
  if (!hit) {
    hit = httpBazaar({
      method: d.method,
      input: { schema: inputJsonSchema(d) ?? { type: 'object' }, example: exampleInput(d) },
      // a route answering the capability's own result (GET, and a POST whose example is in execute
      // form: a `capabilityRoute` such as POST /v1/liquidation-plans) or its response document (POST /rpc)
      output: {
        schema: outputJsonSchema(d) ?? { type: 'object' },
        example: d.method === 'GET' || isExecution(d.example.response) ? exampleResult(d) : (d.example.response ?? undefined),
      },
    });
    routeCache.set(d, hit);
  }
  return hit;
}

const routeCache = new WeakMap<CapabilityDefinition, Record<string, unknown>>();

let deposit: Record<string, unknown> | undefined;

/** `{bazaar}` of `POST /v1/account/deposit` (not a catalog capability: its schemas are `DepositRequest` / `DepositResponse`). */
export function depositBazaar(): Record<string, unknown> {
  deposit ??= httpBazaar({
    method: 'POST',
    input: { schema: toJsonSchema(DepositRequest, { io: 'input' }), example: { amount_usdc: '1.5' } },
    output: {
      schema: toJsonSchema(DepositResponse),
      example: {
        address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
        balance: '1500000',
        spent: '0',
        deposited: '1500000',
        usage: [],
        deposit: { amount: '1500000', tx_hash: `0x${'7a'.repeat(32)}` },
      },
    },
  });
  return deposit;
}
