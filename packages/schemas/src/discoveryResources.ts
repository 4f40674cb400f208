import { z } from 'zod';
import { JsonObject } from './primitives.js';
import { PaymentRequirements } from './paymentChallenge.js';

/**
 * An integer query parameter in `[min, max]` written as a plain decimal integer (`0` or a digit
 * 1-9 then digits: no sign, leading zero, space, hex, exponent or fraction; an empty value is
 * refused too), or a JSON number over /trpc; `fallback` when absent. Anything else is a 400
 * problem whose `errors` name the parameter (issue: `limit=0x10` was read as 16).
 */
function queryInteger(min: number, max: number, fallback: number) {
  return z.preprocess((v) => (typeof v === 'string' && /^(0|[1-9][0-9]{0,15})$/.test(v) ? Number(v) : v), z.number().int().min(min).max(max).default(fallback));
}

/**
 * Query of `GET /discovery/resources` (x402 facilitator discovery API, x402 specification v2 §8.1,
 * and `ListDiscoveryResourcesParams` of `@x402/extensions/bazaar`; apps/gateway README "Discovery
 * for indexers"): `type` (`http` or `mcp`; another value lists nothing), `limit` (1-100, default
 * 20), `offset` (default 0), and the bazaar filters `payTo`, `scheme`, `network`, `extensions`
 * (an extension key every listed resource carries). Unknown parameters are ignored; a `limit` or
 * `offset` that is not a plain decimal integer in range (`0x10`, `1e1`, `+5`, ` 1`, `01`, empty)
 * is a 400.
 */
export const DiscoveryResourcesQuery = z.object({
  type: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/)
    .optional()
    .describe('resource type: http or mcp'),
  limit: queryInteger(1, 100, 20).describe('results per page, a decimal integer 1-100 (default 20)'),
  offset: queryInteger(0, 1_000_000, 0).describe('results to skip, a decimal integer 0-1000000 (default 0)'),
  payTo: z.string().max(100).optional().describe('payment recipient address (any case)'),
  scheme: z.string().max(64).optional().describe('payment scheme, e.g. exact'),
  network: z.string().max(64).optional().describe('CAIP-2 payment network, e.g. eip155:8453'),
  extensions: z.string().max(64).optional().describe('an extension key the resource declares, e.g. bazaar'),
});
export type DiscoveryResourcesQuery = z.infer<typeof DiscoveryResourcesQuery>;

/**
 * One paid resource as x402's discovery API lists it (x402 specification v2 §8.2 and
 * `DiscoveryResource` of `@x402/extensions/bazaar`): `resource` (its URL; for MCP tools the MCP
 * endpoint, the tool being `metadata.toolName`), `type` (`http` or `mcp`), `x402Version` (2),
 * `accepts` (the PaymentRequirements its 402 offers; amount in USDC base units), `lastUpdated`
 * (ISO 8601, when the capability set last changed: the SDK's type, where the specification's
 * prose says a Unix time), `description`, `mimeType`, `metadata` (the bazaar input and output
 * description with their JSON Schemas, the HTTP method or MCP tool name, the capability id) and
 * `extensions.bazaar` (the same declaration as in the resource's 402).
 */
export const DiscoveryResource = z.object({
  resource: z.string(),
  type: z.enum(['http', 'mcp']),
  x402Version: z.literal(2),
  accepts: z.array(PaymentRequirements),
  lastUpdated: z.string(),
  description: z.string(),
  mimeType: z.string(),
  metadata: JsonObject,
  extensions: JsonObject,
});
export type DiscoveryResource = z.infer<typeof DiscoveryResource>;

/** `GET /discovery/resources` answer: `x402Version` 2, `items` (one page) and `pagination` `{limit, offset, total}` (total: matching resources). */
export const DiscoveryResourcesResponse = z.object({
  x402Version: z.literal(2),
  items: z.array(DiscoveryResource),
  pagination: z.object({ limit: z.int(), offset: z.int(), total: z.int() }),
});
export type DiscoveryResourcesResponse = z.infer<typeof DiscoveryResourcesResponse>;
