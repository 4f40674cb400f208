import { RegistryDocument, type ProblemDetails } from '@acg/schemas';
import { z } from 'zod';
import { defineCapability } from '../define.js';

/** `GET /gateway-catalog.json` takes no parameters. */
export type RegistryParameters = Record<string, never>;
/** The docs/spec-notes.md 2.1 registry document: `{registry_version, generated_at, network, capabilities, metric_definitions}`. */
export type RegistryReturnType = z.infer<typeof RegistryDocument>;
/** None in practice (free, not rate limited); problem details otherwise. */
export type RegistryErrorType = ProblemDetails;

/**
 * `gateway.registry`: this machine-readable catalog, free (0 USDC) and unauthenticated, cached
 * 60 s with an ETag. The legacy shape with prices, schemas and examples is `/registry`.
 *
 * @example
 * // GET {base_url}/gateway-catalog.json
 * { "registry_version": "1.0.0", "capabilities": [{ "id": "gateway.execute", "status": "LIVE" }] }
 */
export const gatewayRegistry = defineCapability({
  id: 'gateway.registry',
  product: 'gateway',
  name: 'Capability catalog',
  description: 'This machine-readable catalog of capabilities, readable without authentication.',
  surface: 'REST',
  auth: 'none',
  method: 'GET',
  endpoint: '{base_url}/gateway-catalog.json',
  docs: '{base_url}/llms.txt',
  built: true,
  x402: 'none',
  price: { base_units: 0n, unit: 'call' },
  input: z.strictObject({}),
  output: RegistryDocument,
  example: { request: null, response: null },
  related_capabilities: ['gateway.health'],
  notes: 'The legacy shape with prices, schemas and examples is at {base_url}/registry; both are cached 60 s.',
});
