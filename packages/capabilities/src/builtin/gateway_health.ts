import { HealthDocument, type ProblemDetails } from '@acg/schemas';
import { z } from 'zod';
import { defineCapability } from '../define.js';

/** `GET /status/health` takes no parameters. */
export type HealthParameters = Record<string, never>;
/** `{operational_status, generated_at, capabilities: [{id, status, latency_ms: {p50, p99, samples}, checked_at}], builder}`; latencies in milliseconds. */
export type HealthReturnType = z.infer<typeof HealthDocument>;
/** 429 rate limited (problem+json). */
export type HealthErrorType = ProblemDetails;

/**
 * `gateway.health`: aggregated health of every capability with measured latencies (ms, from
 * stored samples, never constants) and the builder's relays. Free (0 USDC); cached 10 s on the
 * server, sent with `Cache-Control: no-store`.
 *
 * @example
 * // GET {base_url}/status/health
 * { "operational_status": "ok", "capabilities": [{ "id": "gateway.registry", "status": "up", "latency_ms": { "p50": 3, "p99": 9, "samples": 60 } }] }
 */
export const gatewayHealth = defineCapability({
  id: 'gateway.health',
  product: 'gateway',
  name: 'Health telemetry',
  description: 'Aggregated health of every capability with measured latencies, and the bundle builder infrastructure state.',
  surface: 'REST',
  auth: 'none',
  method: 'GET',
  endpoint: '{base_url}/status/health',
  docs: '{base_url}/openapi.json',
  built: true,
  x402: 'none',
  price: { base_units: 0n, unit: 'call' },
  input: z.strictObject({}),
  output: HealthDocument,
  example: { request: null, response: null },
  related_capabilities: ['gateway.registry'],
  notes: 'Cached 10 s on the server, sent with Cache-Control: no-store.',
});
