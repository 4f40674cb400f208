import { z } from 'zod';
import { JsonObject } from './primitives.js';
import { PaymentRequirements } from './paymentChallenge.js';

/**
 * Query of `GET /discovery/resources` (x402 facilitator discovery API, x402 specification v2 §8.1,
 * and `ListDiscoveryResourcesParams` of `@x402/extensions/bazaar`; apps/gateway README "Discovery
 * for indexers"): `type` (`http` or `mcp`; another value lists nothing), `limit` (1-100, default
 * 20), `offset` (default 0), and the bazaar filters `payTo`, `scheme`, `network`, `extensions`
 * (an extension key every listed resource carries). Unknown parameters are ignored; a bad
 * `limit` or `offset` is a 400.
 */
export const DiscoveryResourcesQuery = z.object({
  type: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/)
    .optional()
    .describe('resource type: http or mcp'),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('results per page, 1-100 (default 20)'),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0).describe('results to skip (default 0)'),
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
