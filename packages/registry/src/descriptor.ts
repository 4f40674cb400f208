import type { z } from 'zod';
import type { Auth, CapabilityId, PriceUnit, Product, Surface } from '@acg/schemas';

/**
 * How a capability takes x402 payment: `accepted` (now), `planned` (SPEC says "x402 planned"),
 * `none` (free, or paid another way).
 */
export type X402Mode = 'accepted' | 'planned' | 'none';

/**
 * Static description of one capability: the data the catalog (SPEC 2.1/2.2) and the legacy
 * registry (SPEC 2.3) are built from. Status and evidence are not here: they are derived at build
 * time from `built` and the probe records (see `deriveStatus`).
 */
export interface CapabilityDescriptor {
  /** `<product>.<name>`, stable (SPEC 2.2). */
  id: CapabilityId;
  product: Product;
  /** Short human label. */
  name: string;
  /** One or two quotable sentences. */
  description: string;
  surface: Surface;
  auth: Auth;
  /** HTTP method used on `endpoint` (JSON-RPC and webhook subscriptions are POSTs). */
  method: 'GET' | 'POST';
  /**
   * Canonical URL; a template where `{base_url}` and `{builder_url}` are replaced at build time,
   * or an absolute URL (providers registered at run time).
   */
  endpoint: string;
  /** Documentation URL template (same placeholders), or null. */
  docs: string | null;
  /** Party responsible; defaults to the registry's organization. */
  provider?: string;
  /** True once the capability is implemented and served; false means PLANNED whatever the probes say. */
  built: boolean;
  /** True when it runs through `POST /api/v1/execute` with `capability_id` = `id`. */
  executable: boolean;
  x402: X402Mode;
  /** Price in USDC base units (6 decimals: 1000 = 0.001 USDC) per `price_unit`; null when not fixed. */
  price_base_units: bigint | string | null;
  /** What one price buys; null when `price_base_units` is null. */
  price_unit: PriceUnit | null;
  /**
   * zod schema of what the caller sends (the `input` of an executable capability; otherwise the
   * request body or query), or null when not specified yet.
   */
  input: z.ZodType | null;
  /** zod schema of what the caller gets (the `result` of an executable capability), or null. */
  output: z.ZodType | null;
  /** A complete request the caller can send (HTTP body, or query parameters for GET), or null. */
  example_request: unknown;
  /** A response the caller can expect, or null. */
  example_response: unknown;
  related_capabilities?: CapabilityId[];
  notes?: string;
}
