import { z } from 'zod';
import { Auth, CapabilityStatus, Evidence, Product, Surface } from './capability.js';
import { HealthStatus } from './health.js';
import { Address, Caip2Network, CapabilityId, DateTime, DecimalString, JsonObject, LatencyPercentileMs, SemVer, UintString, Uri } from './primitives.js';
import { RegistryNetwork } from './registryDocument.js';
import { CapabilityOffer } from './routing.js';

/** What one unit of `price` buys: a `call`, a delivered `event`, or a submitted `bundle` (/registry, docs/spec-notes.md 8). */
export const PriceUnit = z.enum(['call', 'event', 'bundle']);
export type PriceUnit = z.infer<typeof PriceUnit>;

/**
 * x402 payment terms of a /registry entry (docs/spec-notes.md 2.3 `x402`, field names as in the 2.9 challenge):
 * `x402Version` 2, `scheme` `exact`, `network` CAIP-2 (`eip155:8453`), `asset` (USDC contract),
 * `payTo` (treasury address), `resource` (URL that answers 402), and `maxAmountRequired`
 * (integer string, USDC base units) only when the capability has a fixed price.
 */
export const LegacyX402Terms = z.object({
  x402Version: z.literal(2),
  scheme: z.literal('exact'),
  network: Caip2Network,
  asset: Address,
  payTo: Address,
  resource: Uri,
  maxAmountRequired: UintString.optional(),
});
export type LegacyX402Terms = z.infer<typeof LegacyX402Terms>;

/**
 * One capability entry of `GET /registry` (docs/spec-notes.md 2.3; types and units decided in
 * packages/registry/README.md). The docs/spec-notes.md 2.2 capability fields (without its `x402` advert, which
 * is replaced by payment terms), plus:
 * - `method`: HTTP method to call `endpoint` with;
 * - `price`: decimal string in `currency` units (`"0.001"`), `price_base_units`: integer string in
 *   USDC base units (6 decimals, `"1000"`), `price_unit`: what one price buys; all three null when
 *   the price is not fixed by the capability (execute: the target's price; jobs: the caller's budget);
 * - `currency`: `"USDC"`;
 * - `latency_ms_p50`, `latency_ms_p99`: milliseconds, null before the first sample;
 * - `authentication`: same enum as `auth`;
 * - `x402`: payment terms, null when the capability does not take x402 payment (yet);
 * - `input_schema`, `output_schema`: JSON Schema 2020-12 objects, null when not specified yet;
 * - `availability`: health status, null when no health sample exists yet;
 * - `example_request`, `example_response`: JSON values a caller can send / expect, null when none.
 */
export const LegacyRegistryEntry = z.object({
  id: CapabilityId,
  product: Product,
  name: z.string().min(1),
  description: z.string().optional(),
  status: CapabilityStatus,
  surface: Surface,
  endpoint: Uri,
  method: z.enum(['GET', 'POST']),
  auth: Auth,
  provider: z.string().min(1),
  proof: z.string().nullable().optional(),
  jwks_url: Uri.nullable().optional(),
  docs_url: Uri.nullable().optional(),
  related_capabilities: z.array(CapabilityId).optional(),
  evidence: Evidence,
  notes: z.string().optional(),
  price: DecimalString.nullable(),
  price_base_units: UintString.nullable(),
  price_unit: PriceUnit.nullable(),
  currency: z.literal('USDC'),
  latency_ms_p50: LatencyPercentileMs,
  latency_ms_p99: LatencyPercentileMs,
  authentication: Auth,
  x402: LegacyX402Terms.nullable(),
  input_schema: JsonObject.nullable(),
  output_schema: JsonObject.nullable(),
  availability: HealthStatus.nullable(),
  example_request: z.unknown(),
  example_response: z.unknown(),
  /** A capability offered by providers: every offer, cheapest first; `price` is then the lowest live offer's (docs/marketplace.md). */
  offers: z.array(CapabilityOffer).optional(),
});
export type LegacyRegistryEntry = z.infer<typeof LegacyRegistryEntry>;

/**
 * The `GET /registry` document (docs/spec-notes.md 4 "legacy registry"): top-level `registry_version`,
 * `generated_at`, `network` (same object as docs/spec-notes.md 2.1) and `capabilities` (entries above, same
 * order as the catalog).
 */
export const LegacyRegistry = z.object({
  registry_version: SemVer,
  generated_at: DateTime,
  network: RegistryNetwork,
  capabilities: z.array(LegacyRegistryEntry).min(1),
});
export type LegacyRegistry = z.infer<typeof LegacyRegistry>;
