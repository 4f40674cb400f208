/** Per-capability fields docs/spec-notes.md 2.3 requires on GET /registry (every entry has each one). */
export const SPEC_2_3_FIELDS: readonly string[] = [
  'endpoint',
  'price',
  'currency',
  'latency_ms_p50',
  'latency_ms_p99',
  'authentication',
  'x402',
  'input_schema',
  'output_schema',
  'availability',
  'example_request',
  'example_response',
];
